//go:build !linux

package benchkit

import (
	"os/user"
	"syscall"
)

// ChildProcAttr is nil outside Linux, which lacks the parent-death signal:
// the server shares the process group, and the user, of the command that
// started it.
func ChildProcAttr(*user.User) *syscall.SysProcAttr { return nil }
