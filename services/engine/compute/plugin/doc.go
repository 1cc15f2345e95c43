// Package plugin installs, verifies and removes compute provider plugins:
// directories holding a manifest (xbot-provider.toml) and the program that
// speaks EPP/1 (package epp), kept below a store directory
// (~/.xbot/providers), one directory per provider id.
//
// Guarantees:
//   - Nothing of a plugin runs at install: no hook, no build step, no git
//     checkout (git sources are read with ls-tree and cat-file and written
//     by the installer).
//   - What is installed is exactly what was shown: symlinks, hard links,
//     devices, FIFOs, paths leaving the plugin and oversized trees are
//     refused; the tree's digest (TreeDigest) and the consent given —
//     runtime, security, features, inherited keys — are kept in the
//     receipt (.xbot-install.json), and every start of the plugin checks
//     the digest (Installed.Verify): a changed tree is refused.
//   - Installing needs consent (Options.Confirm); replacing an installed
//     plugin needs it again when its runtime, security, features or
//     inherited keys change.
//   - Install, update and remove hold the store's lock and swap
//     directories atomically; a failed update leaves the old plugin and its
//     data/ as they were.
package plugin
