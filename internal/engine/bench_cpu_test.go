package engine

import (
	"syscall"
	"testing"
)

// benchLoop runs body in b.Loop and reports, beside the wall time, the process's CPU time per operation
// (cpu-ns/op, every thread: the garbage collector's share included). On a machine busy with other work the
// wall time stretches with the load and CPU time much less, so `make bench-compare` on a shared machine reads
// this column first.
func benchLoop(b *testing.B, body func()) {
	b.Helper()
	b.ReportAllocs()
	start := processCPU()
	n := 0
	for b.Loop() {
		body()
		n++
	}
	if n > 0 {
		b.ReportMetric(float64(processCPU()-start)/float64(n), "cpu-ns/op")
	}
}

// processCPU is the user and system time of the process so far, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
