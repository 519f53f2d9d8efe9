package preempt

import (
	"testing"
	"unsafe"
)

// TestPodInfoStaysSmall: the index holds one podInfo for every bound pod of a snapshot (300,000 in genbig's
// large file), alive at a read command's peak of memory; a field added or moved out of order grows them all.
func TestPodInfoStaysSmall(t *testing.T) {
	if got := unsafe.Sizeof(podInfo{}); got > 64 {
		t.Errorf("podInfo is %d bytes, more than 64", got)
	}
}
