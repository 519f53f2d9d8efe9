//go:build linux

package testenv

import "syscall"

// sysProcAttr makes the child die with the thread that started it (see startProcess), so a test binary
// killed by a timeout or a signal does not leave control-plane processes behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
