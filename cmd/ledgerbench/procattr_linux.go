package main

import "syscall"

// childProcAttr puts ledgerd in a process group of its own, so the
// terminal's Ctrl-C reaches only ledgerbench (which then stops ledgerd in
// order and cleans up), and has the kernel send it SIGTERM should
// ledgerbench die without doing so: no server outlives its benchmark.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
