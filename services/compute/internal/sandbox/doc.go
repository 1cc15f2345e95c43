// Package sandbox holds the host side shared by the compute providers that
// keep a sandbox as a directory on this machine (local, bwrap): the directory
// layout of a sandbox key, file access confined to the run's directories,
// and process-group execution.
//
// Guarantees:
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
package sandbox
