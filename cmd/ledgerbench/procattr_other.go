//go:build !linux

package main

import "syscall"

// childProcAttr is nil outside Linux, which lacks the parent-death signal:
// ledgerd then shares ledgerbench's process group.
func childProcAttr() *syscall.SysProcAttr { return nil }
