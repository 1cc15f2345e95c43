// Package local is the development compute provider: each sandbox key is a
// directory under Config.Dir and commands run directly on the host with
// /bin/sh. It isolates nothing — a command can read and write whatever the
// executor's user can — so it is for development only; use bwrap elsewhere.
//
// What it does guarantee:
//   - Layout: <Dir>/<tenant>/<workspace>/<agent>/<owner>/ holds workspace/,
//     sessions/<sid>/context and sessions/<sid>/runs/<rid>/{input,output,tmp}
//     (each ID escaped, so none can traverse). Each is created when first
//     needed: by a write into it, or by a command, which gets its working
//     directory, the workspace and the run's tmp (it cannot reach the
//     others by their sandbox paths). Opening a sandbox creates nothing.
//   - Environment: nothing from the executor's environment is inherited;
//     processes get PATH, HOME (the workspace), TMPDIR (the run's tmp),
//     LANG=C.UTF-8 and Spec.Env.
//   - Processes see host paths: the working directory, HOME and TMPDIR are
//     the host directories, so commands should use relative paths, $HOME or
//     $TMPDIR rather than /workspace.
//   - File operations of the Sandbox (ReadFile, WriteFile, ListFiles) take
//     sandbox paths and never leave the run's directories; see package
//     compute.
//   - Commands run in a session and process group of their own, without a
//     controlling terminal. Timeouts, context cancellation and Kill kill
//     the whole group; a process that calls setsid escapes it, unless the
//     sandbox's limits run on cgroups, whose group it cannot leave.
//   - Resource limits as with bwrap (Config.Limits, Config.LimitMechanism).
package local
