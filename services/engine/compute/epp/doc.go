// Package epp is the host side of EPP/1, the protocol of compute provider
// plugins (docs/providers.md): a Provider runs an installed plugin program
// and speaks JSON-RPC 2.0 with it, one object per line on the plugin's
// stdin and stdout, and so implements compute.Provider and
// compute.Sandbox with sandboxes the plugin keeps.
//
// Guarantees:
//   - One plugin process per run's sandbox session (a Sandbox handle),
//     started with a scrubbed environment (PATH, HOME, TMPDIR, LANG, LC_*,
//     the manifest's passthrough names, XBOT_PROVIDER_DATA_DIR,
//     PYTHONDONTWRITEBYTECODE=1) in its data
//     directory and a process group of its own; the provider's settings
//     reach it in initialize only. Config.Verify (the installed tree's
//     digest) runs before every start. The host process is made
//     non-dumpable (New), so that a plugin — the same user — cannot read
//     the host's environment or memory through /proc.
//   - Every request is of the method table (Methods, published as
//     docs/epp-methods.json by Fixture) and of a feature the plugin has; a
//     missing feature fails with a *FeatureError before anything is sent.
//   - Lines are at most MaxMessageBytes both ways; a line that is not
//     JSON-RPC, too long or not UTF-8 kills the plugin (ErrProtocol).
//   - initialize answers within the startup timeout (10 s by default),
//     every other call within the call timeout (60 s) or the host sends
//     $/cancel and stops waiting (ErrTimeout); a cancelled context does the
//     same. Only methods the table marks retried are repeated, and only on
//     an error the plugin marks retryable.
//   - Shutdown is: shutdown, stdin closed, SIGTERM to the process group 3 s
//     later, SIGKILL 3 s after that; the group is killed whenever the
//     plugin exits.
//   - Errors the plugin answers map to typed errors (*Error: ErrProvider
//     and compute's sentinels by kind); a plugin that dies or breaks the
//     protocol fails every waiting call with an *ExitError, which wraps
//     compute.ErrSandboxLost, showing the end of its stderr. Text of the
//     plugin is cleaned of control characters and secret settings before
//     the host shows it.
//   - A run's sandbox is the one it recorded (compute.Spec.SandboxID) or a
//     running one of its key, else a new one; a recorded sandbox that is
//     gone is compute.ErrSandboxLost, never replaced.
package epp
