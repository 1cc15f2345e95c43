package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A command must not run one instruction before it is in its cgroup and
// has its rlimits. Two ways hold it until then, chosen once per Provider
// (chooseHold):
//   - trace: the process asks to be traced (PTRACE_TRACEME, the last thing
//     before its exec), so the kernel stops it at the exec, before the new
//     program's first instruction; the executor places it, sets its rlimits
//     with prlimit and detaches. No extra process, no extra exec. It needs
//     CAP_SYS_PTRACE (a traced exec gains no privilege from a setuid or
//     file-capability binary unless the tracer has it, and Yama's scope 2
//     allows PTRACE_TRACEME only then) and, for commands that run as
//     another user (bwrap's sandbox user), CAP_SYS_RESOURCE (prlimit on
//     another user's process): an executor running as root, unless its
//     container withholds them or seccomp forbids ptrace.
//   - gate: the process is a /bin/sh that sets its own file-size and data
//     limits, waits for a line on a pipe and then execs the command
//     (gateScript). Works for any user; costs one shell start per command.
type hold int

const (
	holdGate hold = iota
	holdTrace
)

// String names the hold as the provider's log line does.
func (h hold) String() string {
	if h == holdTrace {
		return "ptrace"
	}
	return "gate"
}

// chooseHold is holdTrace when this process has CAP_SYS_PTRACE and a probe
// command started as owner (nil: this process's user) could be held, limited
// and released that way, else holdGate and why.
func chooseHold(owner *Owner) (hold, string) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return holdGate, "a 32-bit build (sigchld has the 64-bit layout)"
	}
	if !hasCap(unix.CAP_SYS_PTRACE) {
		return holdGate, "no CAP_SYS_PTRACE"
	}
	if err := probeTrace(owner); err != nil {
		return holdGate, err.Error()
	}
	return holdTrace, ""
}

// hasCap reports whether capability c is in this process's effective set.
func hasCap(c uintptr) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// probeTimeout bounds the probe: an empty command that has not ended by
// then is killed.
const probeTimeout = 10 * time.Second

// probeTrace starts an empty shell command as owner, held by ptrace as
// every command will be, sets its file-size limit to this process's and
// lets it run: seccomp, Yama's scope 3, a kernel without ptrace or a
// missing CAP_SYS_RESOURCE for another user fail here.
func probeTrace(owner *Owner) error {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "-c", ":")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if owner != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(owner.UID), Gid: uint32(owner.GID), //nolint:gosec // validated non-negative
			Groups: []uint32{}}
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		return fmt.Errorf("ptrace probe: %w", err)
	}
	err := startTraced(cmd, func(pid int) error {
		if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil {
			return fmt.Errorf("prlimit of a process of uid %d: %w", owner.uid(), err)
		}
		return nil
	})
	if err != nil {
		if cmd.Process != nil {
			_ = cmd.Wait()
		}
		return fmt.Errorf("ptrace probe: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("ptrace probe: %w", err)
	}
	return nil
}

// startTraced starts cmd traced, waits until the kernel stopped it (at its
// exec), calls place and detaches it. When place fails the process is
// killed, unreleased; either way the caller waits for it (cmd.Wait) when
// cmd.Process is set. The tracer is the thread that forks, and only it may
// detach, so the goroutine stays on its thread throughout.
func startTraced(cmd *exec.Cmd, place func(pid int) error) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	sig, err := awaitStop(pid)
	if err == nil {
		if err = place(pid); err == nil {
			err = detach(pid, sig)
		}
	}
	if err != nil {
		_ = cmd.Process.Kill() // a stopped tracee dies too
	}
	return err
}

// si_code values of a SIGCHLD siginfo for a stop (linux/signal.h).
const (
	cldTrapped = 4
	cldStopped = 5
)

// sigchld is the part of a waitid siginfo_t for SIGCHLD that we read, as
// 64-bit kernels lay it out (the union at offset 16; 12 on 32-bit ones,
// where chooseHold keeps the gate).
type sigchld struct {
	signo, errno, code, _ int32
	pid                   int32
	uid                   uint32
	status                int32
	_                     [100]byte
}

// awaitStop waits until process pid (traced) stops and returns the signal
// it stopped with: SIGTRAP at its exec, or one that reached it before, to
// be delivered when it is detached. An exit is left unreaped, for
// cmd.Wait, and is an error.
func awaitStop(pid int) (syscall.Signal, error) {
	var si sigchld
	for {
		_, _, errno := unix.Syscall6(unix.SYS_WAITID, unix.P_PID, uintptr(pid),
			uintptr(unsafe.Pointer(&si)), unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT|unix.WALL, 0, 0) // #nosec G103 -- waitid fills si
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, fmt.Errorf("wait for the held process: %w", errno)
		}
		break
	}
	switch si.code {
	case cldTrapped, cldStopped:
		if sig := syscall.Signal(si.status); sig != syscall.SIGTRAP {
			return sig, nil
		}
		return 0, nil
	}
	return 0, errors.New("the held process ended before it was released")
}

// detach lets traced process pid run, delivering sig unless 0.
func detach(pid int, sig syscall.Signal) error {
	if _, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(sig), 0, 0); errno != 0 {
		return fmt.Errorf("release the held process: %w", errno)
	}
	return nil
}
