// Package bwrap is the compute provider that isolates each command with
// Linux namespaces through bubblewrap (the bwrap binary, Debian package
// bubblewrap). The sandbox's directories live on the host exactly as with
// the local provider (<Dir>/<tenant>/<workspace>/<agent>/<owner>/...), and
// file operations run on the host with the same confinement.
//
// What a command sees and may do:
//   - A new root that is a read-only tmpfs holding: /usr and the /bin, /sbin,
//     /lib* directories or merged-/usr symlinks, read-only; an allow-list of
//     /etc files (defaultEtc: no shadow, gshadow, sudoers, SSH or TLS private
//     keys, pip/npm credentials), read-only; a fresh /proc (its own PID
//     namespace: no host process is visible), a minimal /dev, and size-capped
//     tmpfs at /tmp and /dev/shm.
//   - Writable host directories: /workspace, /sessions/<sid>/context and the
//     run's output and tmp. The run's input is bound read-only. Nothing else
//     of the host is visible, and nothing else of the host is writable.
//   - Every Exec is a sandbox of its own: /tmp starts empty and no process
//     outlives its command. State that must persist lives in /workspace,
//     the session's context or the run's directories ($TMPDIR for scratch).
//   - New user, PID, network, IPC, UTS and cgroup namespaces; all
//     capabilities dropped (also when the executor runs as root); no nested
//     user namespaces. Without Spec.Network the only network is a loopback
//     of its own; with it the host's network is shared.
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
// Not provided: a seccomp filter. The process's host UID is the executor's,
// which matters only for what is mounted: run the executor as a dedicated
// user.
package bwrap
