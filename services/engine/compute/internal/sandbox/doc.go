// Package sandbox holds the host side shared by the compute providers that
// keep a sandbox as a directory on this machine (local, bwrap): the directory
// layout of a sandbox key, file access confined to the run's directories,
// and process-group execution.
//
// Guarantees:
//   - Opening a Box creates nothing on the host. A write creates the
//     directory it writes into; a command, the directories it can reach
//     (every directory of the run; with WithHostPaths its working
//     directory, /workspace and the run's tmp) and the Box's cgroup. Each
//     directory the run gets is the sandbox user's, those above it the
//     executor's. Reads and listings create nothing: one of the run's
//     directories not created yet lists as empty.
//   - Every key, session and run ID becomes one escaped path component, so no
//     ID can name a directory outside the provider's base directory, and
//     distinct IDs never share a directory.
//   - File operations resolve sandbox paths on the host through os.Root: a
//     path that leaves the run's directories, lexically (..) or through a
//     symlink, is refused with compute.ErrPathOutside; only regular files are
//     read or written, so a FIFO planted in the sandbox cannot block the
//     caller.
//   - Exec runs the command in a session and process group of its own,
//     without a controlling terminal; on timeout, context
//     end or Kill the whole group receives SIGKILL, and when the command's
//     shell exits whatever it left running in its group is killed too. Exec
//     returns at most drainTimeout after the shell has gone, even if an
//     escaped process still holds the output pipes.
//   - A launcher may keep one companion process per Box for its commands
//     (Companion: bwrap's network namespace). It starts held, placed and
//     limited as a command in a subgroup of the Box's group, with the
//     first command that asks for it; Kill leaves it, Close asks it to end
//     (killed companionGrace later), Destroy kills it, and one that ended,
//     or whose key no longer fits, is replaced for the next command.
//
// Resource limits (compute.Limits), by mechanism, chosen once at start
// (LimitConfig.Mechanism; auto tries cgroup v2, then v1, then rlimits):
//   - cgroup v2 / v1: each Box gets, with its first command, a group below
//     the parent (v2: the configured delegated group; v1: this process's
//     own group in the memory, pids and cpu hierarchies) holding its memory
//     limit (no swap beyond it), pids limit and CFS quota; each command gets
//     a subgroup. A command starts held, is placed into the subgroup and
//     given its rlimits, and only then runs, so no instruction of it runs
//     unlimited. It is held by ptrace (stopped by the kernel at its exec;
//     an executor with CAP_SYS_PTRACE, and CAP_SYS_RESOURCE for commands
//     of another user) or else by a gate (a /bin/sh that sets its own
//     rlimits, waits on a pipe and then execs the command); see hold. On
//     timeout, cancel or Kill the subgroup is killed as a whole (cgroup.kill,
//     else SIGKILL to every member until it is empty), which also reaches
//     processes that left the process group. A subgroup its command left
//     empty serves the Box's next command (with the counters read when its
//     last command ended: an empty group's cannot change; the Box's group's
//     are read again only while another command runs); the subgroups and the
//     Box's group are removed when it is closed and idle. A command the OOM
//     killer hit (oom_kill in memory.events, v1 memory.oom_control) or that
//     failed a fork at pids.max (pids.events max) returns a
//     *compute.LimitError; counters are compared before and after, so two
//     concurrent commands of one Box may both report a limit the other hit.
//   - rlimit (no usable cgroup, e.g. an unprivileged executor without
//     delegation): RLIMIT_DATA = the memory limit per process (not the
//     sandbox's total), and for a non-root executor RLIMIT_NPROC = the pids
//     limit plus the tasks its uid runs at that moment (the kernel counts
//     per uid, host-wide; root is exempt). No CPU quota. Hitting these shows
//     as the command's own failure (ENOMEM, EAGAIN), not as a LimitError.
//   - Workspace size, every mechanism: the blocks allocated below the key's
//     directory, each entry counted as at least one block (entryMinBytes:
//     an inode, so no number of empty files fits the limit). WriteFile is refused when the write would exceed it (exact
//     to a block); while a command runs the usage is checked every
//     usagePoll (less often where the check is slow), and the command
//     stopped when over; after each command it is checked again, and a
//     LimitError returned when over (the files stay, so the run can remove
//     them; writes are refused until it fits). RLIMIT_FSIZE = the limit
//     bounds any single file exactly. Approximate: a command may overshoot
//     by what it writes between two checks; and a key of more
//     than walkExactEntries entries is walked at most once per walkEvery
//     for each walkExactEntries, its last measure (plus the writes since)
//     standing in between, and walked again before any refusal
//     (usageMeter). The walk goes by descriptor, so no depth hides a file
//     from it, and a usage it cannot measure (a directory it may not read)
//     counts as over the limit (usage). Directories count
//     too, so a run's own directories that it left empty are handed to the
//     key's next run or removed when its last handle closes, and then its
//     session's context, runs directory and own directory when empty and no
//     run of the session holds its lock (Layout.tidy, tidySessionDir): a key's
//     directory holds what its runs kept, not a trace of every run or
//     session, and the usage walk after each command does not grow with the
//     number of runs or sessions.
package sandbox
