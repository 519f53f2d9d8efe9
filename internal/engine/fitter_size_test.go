package engine

import (
	"testing"
	"unsafe"
)

// TestFitterStaysInItsSizeClass guards the one allocation every evaluation makes for its fitter: Go rounds an
// object up to its size class, and an object over 512 bytes with pointers carries an 8-byte header, so a
// fitter of 2,288 bytes takes the 2,304-byte class and one of 2,300 the 2,688-byte class (384 bytes more per
// evaluation, seen once on branch s10-score). A field added to the fitter that crosses the class boundary fails
// here; move it behind a pointer or drop another.
func TestFitterStaysInItsSizeClass(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size classes below are those of 64-bit platforms")
	}
	const class, header = 2304, 8
	if sz := unsafe.Sizeof(fitter{}); sz+header > class {
		t.Errorf("fitter is %d bytes (+%d header) > the %d-byte size class it had", sz, header, class)
	}
}
