package benchkit

import (
	"os/user"
	"strconv"
	"syscall"
)

// ChildProcAttr puts a server (ledgerd, or a server ledgerchaos runs) in a
// process group of its own, so the terminal's Ctrl-C reaches only the
// command that started it (which then stops the server in order and cleans
// up), and has the kernel send it SIGTERM should that command die without
// doing so: no server outlives its run. It runs as owner when not nil
// (Postgres refuses to run as root).
func ChildProcAttr(owner *user.User) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if owner != nil {
		uid, _ := strconv.ParseUint(owner.Uid, 10, 32)
		gid, _ := strconv.ParseUint(owner.Gid, 10, 32)
		a.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	return a
}
