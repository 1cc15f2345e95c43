//go:build unix && !linux

package devstack

import "syscall"

// sysProcAttr puts the child in its own process group so Stop can kill the
// whole server. There is no parent-death signal outside Linux: a server whose
// caller crashes keeps running until stopped by hand.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}

// leftovers returns []int{-pgid} (the process group, to signal as a whole)
// while group pgid has members, zombies included. Without /proc the children
// of PostgreSQL, which leave the group, cannot be found: they exit on their
// own shortly after the postmaster dies.
func leftovers(pgid int, _ string) []int {
	if pgid > 0 && syscall.Kill(-pgid, 0) == nil {
		return []int{-pgid}
	}
	return nil
}

// processCmdline is unknown without /proc.
func processCmdline(int) ([]string, bool) { return nil, false }

// sysProcAttrKillOnParentDeath is sysProcAttr(nil): there is no parent-death
// signal outside Linux.
func sysProcAttrKillOnParentDeath() *syscall.SysProcAttr { return sysProcAttr(nil) }

// processState is unknown without /proc.
func processState(int) string { return "unknown" }
