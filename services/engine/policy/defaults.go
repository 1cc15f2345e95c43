package policy

import (
	"slices"
	"strings"
)

// DefaultRules returns the built-in rules, checked after a profile's own
// unless Config.NoDefaults: denials for what no run should do (delete the
// filesystem, wipe a disk, fork-bomb, read credentials), then approval for
// what a person should see first (package installs, network use, writes
// outside the workspace, running as another user). They cover the built-in
// tools shell (argument command), read_file and write_file (argument path).
// Ids start with "default." and are stable: a later version may refine a
// pattern, but an id keeps naming the same kind of call, so grants naming
// it keep their meaning. Use Policy.Snapshot to freeze the exact patterns.
func DefaultRules() []Rule {
	return slices.Clone(defaultRules)
}

var defaultRules = []Rule{
	{
		ID: "default.rm-root", Tool: "shell", Argument: "command", Action: Deny,
		Pattern: rmRoot,
		Reason:  "Recursively deleting the filesystem root would destroy the sandbox; this is never allowed.",
	},
	{
		ID: "default.disk-format", Tool: "shell", Argument: "command", Action: Deny,
		Pattern: diskFormat,
		Reason:  "Formatting or overwriting a disk device is never allowed.",
	},
	{
		ID: "default.fork-bomb", Tool: "shell", Argument: "command", Action: Deny,
		Pattern: forkBomb,
		Reason:  "A fork bomb exhausts the sandbox's processes; this is never allowed.",
	},
	{
		ID: "default.credentials", Tool: "shell", Argument: "command", Action: Deny,
		Pattern: credentialPath,
		Reason:  "Commands may not touch credential files (password hashes, SSH private keys, cloud, registry and cluster tokens, process environments).",
	},
	{
		ID: "default.credentials.read-file", Tool: "read_file", Argument: "path", Action: Deny,
		Pattern: credentialPath,
		Reason:  "Credential files (password hashes, SSH private keys, cloud, registry and cluster tokens, process environments) may not be read.",
	},
	{
		ID: "default.credentials.read-file-part", Tool: "read_file_part", Argument: "path", Action: Deny,
		Pattern: credentialPath,
		Reason:  "Credential files (password hashes, SSH private keys, cloud, registry and cluster tokens, process environments) may not be read.",
	},
	{
		ID: "default.package-install", Tool: "shell", Argument: "command", Action: RequireApproval,
		Pattern: packageInstall,
		Reason:  "Installs or updates packages, which downloads and runs third-party code.",
	},
	{
		ID: "default.network", Tool: "shell", Argument: "command", Action: RequireApproval,
		Pattern: network,
		Reason:  "Uses the network (downloads, remote shells, git remotes), which can send data out of the sandbox or bring code in.",
	},
	{
		ID: "default.write-outside-workspace", Tool: "shell", Argument: "command", Action: RequireApproval,
		Pattern: shellWriteOutside,
		Reason:  "Writes, moves or deletes files outside /workspace, /sessions and /tmp.",
	},
	{
		ID: "default.write-outside-workspace.write-file", Tool: "write_file", Argument: "path", Action: RequireApproval,
		Pattern: writeFileOutside,
		Reason:  "Writes a file outside /workspace and /sessions.",
	},
	{
		ID: "default.privilege", Tool: "shell", Argument: "command", Action: RequireApproval,
		Pattern: command(`sudo|su|doas|pkexec|runuser`),
		Reason:  "Runs a command as another user (sudo, su).",
	},
}

func oneOf(alts ...string) string { return `(?:` + strings.Join(alts, "|") + `)` }

// rootOperand is the filesystem root as an argument: /, //, /., /*, "/".
const rootOperand = `["']?/+\.{0,2}/*["']?\*?["']?(?:[\s;&|)\x60]|$)`

var rmRoot = oneOf(
	cmdStart+oneOf(
		`rm`+restArgs+rootOperand,
		`rm\s[^;&|\n]*--no-preserve-root`,
		`find\s+["']?/+["']?\s[^;&|\n]*-delete\b`,
	),
	`\bcd\s+["']?/+["']?\s*(?:&&|;|\n)\s*(?:sudo\s+)?(?:[\w./-]*/)?rm`+restArgs+`["']?\*`,
)

// disk is a block or memory device.
const disk = `/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|mapper/|loop|k?mem\b|root\b)`

var diskFormat = oneOf(
	cmdStart+oneOf(
		`(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs)`+wordEnd,
		`shred`+restArgs+`["']?`+disk,
	),
	`(?:\bof=|>)\s*["']?`+disk,
)

// forkBomb is a function whose whole body pipes a call into a background
// call: :(){ :|:& };:
const forkBomb = `[\w:.]+\s*\(\s*\)\s*\{\s*[\w:.]+\s*\|\s*[\w:.]+\s*&\s*;?\s*\}`

// credentialPath mentions a credential file or directory anywhere in the
// text. Public keys, known_hosts, authorized_keys and ~/.ssh/config are not
// credentials; the ~/.ssh, ~/.aws and ~/.gnupg directories as a whole are.
const credentialPath = `(?:^|[^\w.-])(?:` +
	`/etc/g?shadow-?` +
	`|\.ssh(?:/(?:\*|id_[\w*?-]*|[\w*?.-]*\.(?:pem|key)))?/?` +
	`|\.aws(?:/credentials)?/?` +
	`|\.gnupg(?:/[^` + wordStop + `]*)?` +
	`|\.netrc|\.git-credentials|\.pgpass|\.docker/config\.json|\.kube/config` +
	`|/proc/[^/\s]+/(?:task/[^/\s]+/)?environ` +
	`|(?:/var)?/run/secrets(?:/[^` + wordStop + `]*)?` +
	`)(?:[^\w./-]|$)`

const (
	packageManagers = `apt|apt-get|aptitude|yum|dnf|microdnf|zypper|apk|brew|port|snap|flatpak|conda|mamba|micromamba` +
		`|pip[\d.]*|pipx|python[\d.]*\s+-m\s+pip|uv(?:\s+pip|\s+tool)?|easy_install|poetry|pdm` +
		`|npm|pnpm|yarn|bun|gem|bundle|cargo|go|composer`
	packageVerbs = `install|i|in|add|reinstall|localinstall|groupinstall|get|ci|require|update|upgrade|up|dist-upgrade|full-upgrade|sync`
)

var packageInstall = cmdStart + oneOf(
	`(?:`+packageManagers+`)(?:\s+-\S+)*\s+(?:`+packageVerbs+`)`+wordEnd,
	`pacman(?:\s+-\S+)*\s+-[A-Za-z]*[SU]`,
	`yarn\s*(?:$|[;&|)\n])`,
)

var network = cmdStart + oneOf(
	`(?:curl|wget|ssh|scp|sftp|ssh-copy-id|nc|ncat|netcat|telnet|ping6?|ftp|lftp|socat|aria2c|https?|xh|gh|dig|nslookup|traceroute|mosh)`+wordEnd,
	`rsync`+restArgs+`["']?(?:rsync://|(?:[\w.-]+@)?[\w.-]+::?)`,
	`git(?:\s+-\S+(?:\s+[^-\s]\S*)?)*\s+(?:clone|fetch|pull|push|ls-remote|remote\s+update|submodule\s+(?:update|sync))`+wordEnd,
)

var shellWriteOutside = oneOf(
	// Redirections, dd of=, and commands that write every path they name.
	oneOf(
		`(?:^|[^=-])>{1,2}\|?\s*`, // not => or ->, which are arrows in inline scripts
		`\bof=`,
		cmdStart+oneOf(
			`(?:tee|mkdir|touch|chmod|chown|chgrp|rm|rmdir|unlink|truncate|mv|shred)`+restArgs,
			`tar\s[^;&|\n]*(?:-C|--directory=?)\s*`,
			`unzip\s[^;&|\n]*-d\s*`,
		),
	)+outsidePath+wordEnd,
	// cp, ln, install and rsync write only their last argument.
	cmdStart+`(?:cp|ln|install|rsync)`+restArgs+outsidePath+`["']?\s*(?:$|[;&|\n)]|\d*>)`,
)

var writeFileOutside = oneOf(
	`^/+`+notIn("/", "workspace", "sessions")+`(?:/|$)`,
	`^/+$`,
	`(?:^|/)\.\.(?:/|$)`,
)
