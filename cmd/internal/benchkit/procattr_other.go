//go:build !linux

package benchkit

import "syscall"

// childProcAttr is nil outside Linux, which lacks the parent-death signal:
// ledgerd then shares the process group of the command that started it.
func childProcAttr() *syscall.SysProcAttr { return nil }
