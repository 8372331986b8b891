package benchkit

import "syscall"

// childProcAttr puts ledgerd in a process group of its own, so the
// terminal's Ctrl-C reaches only the command that started it (which then
// stops ledgerd in order and cleans up), and has the kernel send it SIGTERM
// should that command die without doing so: no server outlives its run.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
