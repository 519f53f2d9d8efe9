package snapshot_test

import (
	"syscall"
	"testing"
)

// cpuMeter reports the process's CPU time per operation (cpu-ns/op, every thread: the garbage collector's
// share included) beside the wall time: on a machine busy with other work the wall time stretches with the
// load and CPU time much less, so `make bench-compare` on a shared machine reads this column first (as the
// engine's benchmarks do). Start it before the loop, call done with the loop's count after it.
func cpuMeter() func(b *testing.B, n int) {
	start := processCPU()
	return func(b *testing.B, n int) {
		if n > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(n), "cpu-ns/op")
		}
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
