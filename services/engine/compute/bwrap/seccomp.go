package bwrap

import (
	"encoding/binary"
	"fmt"
	"os"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// deniedSyscalls fail with EPERM inside the sandbox: they reconfigure the
// kernel or the mount table, load code into the kernel, open large attack
// surfaces that tools do not need (bpf, perf, io_uring, userfaultfd,
// keyrings), or inspect other processes (ptrace). Names this architecture
// lacks are skipped.
var deniedSyscalls = []string{
	// mounts and namespaces
	"mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
	"fsmount", "fspick", "mount_setattr", "unshare", "setns",
	// kernel code and configuration
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
	"swapon", "swapoff", "acct", "syslog", "_sysctl", "sysfs", "ustat", "uselib", "quotactl", "quotactl_fd",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime", "iopl", "ioperm", "vhangup",
	"nfsservctl", "lookup_dcookie", "open_by_handle_at", "name_to_handle_at",
	// large attack surface
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "fanotify_init",
	// other processes
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
}

// allowedPersonalities are the personality(2) values tools use (query,
// PER_LINUX, PER_LINUX32, UNAME26 and their combination); others, such as
// ADDR_NO_RANDOMIZE or READ_IMPLIES_EXEC, weaken the process's defences.
var allowedPersonalities = []uint64{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// Terminal ioctls that inject input or reprogram a console. The sandbox has
// no terminal; denying them is a second line behind that.
const (
	tiocsti   = 0x5412
	tioclinux = 0x541C
)

// filterProgram compiles the sandbox's seccomp filter for this machine's
// architecture into the byte form bwrap --seccomp reads: an array of
// struct sock_filter in native byte order. Every other architecture's
// system calls (e.g. i386 through int 0x80) fail with ENOSYS.
func filterProgram() ([]byte, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	policy := seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{{
		Names: known(info, deniedSyscalls), NamesWithCondtions: conditional(), Action: seccomp.ActionErrno,
	}}}
	insns, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	// The library lets a foreign architecture through to its default
	// action; this prefix refuses it first.
	prefix := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | 38}, // ENOSYS
	}
	raw, err := bpf.Assemble(append(prefix, insns...))
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	return out, nil
}

// known keeps the names info's architecture has.
func known(info *arch.Info, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := info.SyscallNames[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// conditional are the calls denied for some arguments only.
func conditional() []seccomp.NameWithConditions {
	persona := make(seccomp.ArgumentConditions, 0, len(allowedPersonalities))
	for _, v := range allowedPersonalities {
		persona = append(persona, seccomp.Condition{Argument: 0, Operation: seccomp.NotEqual, Value: v})
	}
	return []seccomp.NameWithConditions{
		{Name: "personality", Conditions: persona},
		{Name: "ioctl", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: tiocsti}}},
		{Name: "ioctl", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: tioclinux}}},
	}
}

// filterFile returns a pipe whose reading end yields program, for bwrap
// --seccomp. The program (well under the 64 KiB a pipe buffers) is written
// and the writing end closed before the command starts.
func filterFile(program []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter pipe: %w", err)
	}
	_, err = w.Write(program)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("seccomp filter pipe: %w", err)
	}
	return r, nil
}
