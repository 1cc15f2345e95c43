// Package bwrap is the compute provider that isolates each command with
// Linux namespaces through bubblewrap (the bwrap binary, Debian package
// bubblewrap). The sandbox's directories live on the host exactly as with
// the local provider (<Dir>/<tenant>/<workspace>/<agent>/<owner>/...), and
// file operations run on the host with the same confinement. They are
// created when first needed: a write creates the directory it writes into,
// and a command, which has them all mounted, all of them.
//
// What a command sees and may do:
//   - A new root that is a read-only tmpfs holding: /usr and the /bin, /sbin,
//     /lib* directories or merged-/usr symlinks, read-only; an allow-list of
//     /etc files (defaultEtc: no shadow, gshadow, sudoers, SSH or TLS private
//     keys, pip/npm credentials), read-only (its files copied in, its
//     directories bound: etcCopies); a fresh /proc (its own PID
//     namespace: no host process is visible), a minimal /dev, and size-capped
//     tmpfs at /tmp and /dev/shm.
//   - Writable host directories: /workspace, /sessions/<sid>/context and the
//     run's output and tmp. The run's input is bound read-only. Nothing else
//     of the host is visible, and nothing else of the host is writable.
//   - Every Exec is a sandbox of its own: /tmp starts empty and no process
//     outlives its command. State that must persist lives in /workspace,
//     the session's context or the run's directories ($TMPDIR for scratch).
//   - Never host root: when the executor runs as root, bwrap (and pasta)
//     start as Config.UID:GID (default 65200:65200), and the run's
//     directories and the files written through the Sandbox belong to that
//     user; otherwise processes are the executor's (non-root) user. Dir's
//     parents must be searchable by others (New says so otherwise).
//   - New user, PID, network, IPC, UTS and cgroup namespaces; all
//     capabilities dropped; no nested user namespaces; /proc/sys bound
//     read-only; a seccomp filter (seccomp.go) makes mount, namespace,
//     kernel-module, kexec, bpf, perf, io_uring, keyring, userfaultfd,
//     ptrace and similar calls fail with EPERM, and other architectures'
//     calls with ENOSYS.
//   - Without Spec.Network the only network is a loopback of its own. With
//     it, a network namespace of its own behind pasta (network.go), IPv4
//     only: no port of the host is forwarded, the host's loopback is not
//     mapped, and loopback, private, link-local (cloud metadata),
//     carrier-grade NAT and reserved ranges and the host's own addresses
//     are unreachable (prohibit routes) except what Spec.AllowHosts lists.
//     The namespace is the handle's: its first networked command starts
//     it (pasta and a holding shell, the handle's companion, limited with
//     its commands), each command enters it with nsenter, and it ends when
//     the handle closes, or is started again when it ended or the host's
//     addresses changed. Concurrent commands of one handle share it; no
//     other handle's command can reach it.
//   - Environment: only PATH, HOME=/workspace, TMPDIR=<the run's tmp>,
//     LANG=C.UTF-8 and Spec.Env.
//   - When the command's shell exits, or on timeout, context end or Kill,
//     every process of the sandbox dies: bwrap runs in a session and
//     process group of its own that the whole sandbox stays in, and when
//     the PID namespace's init dies the kernel kills the rest.
//   - No controlling terminal: the session is new, and /dev/pts is the
//     sandbox's own.
//
// Resource limits (Spec.Limits, defaults from Config.Limits): memory,
// processes and CPU of the sandbox's commands together, and the disk used
// by the key's directories; see package sandbox for what is exact. The
// startup log line names the mechanism in force ("limits": "cgroup v1", or
// "rlimit (<why no cgroup>)").
//
// Not hidden: /proc/self/mountinfo shows, for each bind mount, the source's
// path within its filesystem (the host path of the run's directories unless
// Dir is a filesystem of its own). Networked sandboxes resolve names with
// the host's /etc/resolv.conf: a resolver in a blocked range must be listed
// in AllowHosts.
package bwrap
