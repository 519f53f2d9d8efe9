//go:build !linux

package testenv

import "syscall"

// sysProcAttr: outside Linux there is no parent-death signal; processes are stopped by t.Cleanup only.
func sysProcAttr() *syscall.SysProcAttr { return nil }
