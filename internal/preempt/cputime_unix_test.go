//go:build unix

package preempt

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used (user and system): on a machine shared with other work it
// moves far less than the wall clock does.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
