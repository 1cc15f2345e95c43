package policy

import (
	"slices"
	"strings"
)

// Building blocks of the built-in rules' patterns. Shell rules read the
// command as text, not as a parse; each block says where it starts and stops.

// wordStop are the characters that end an unquoted shell word.
const wordStop = `\s"';&|()<>\x60`

// wordEnd matches where a command name ends.
const wordEnd = `(?:[` + wordStop + `]|$)`

// cmdStart matches where a command can begin: the start of the text, after a
// separator, pipe, subshell or keyword, inside `sh -c "…"` or `eval "…"`;
// then wrappers that run the next word as a command (sudo, env, xargs,
// timeout 10, VAR=value) and a directory (/usr/bin/, ./venv/bin/).
const cmdStart = `(?:^|[;&|(){}!\n\x60]|\$\(|\b(?:then|do|else)\s|-c\s+["']|\beval\s+["']?)\s*` +
	`(?:(?:sudo|doas|env|exec|nohup|time|command|builtin|xargs|nice|stdbuf|timeout|watch)(?:\s+(?:-\S+|\d+\w?|\w+=\S*))*\s+|\w+=\S*\s+)*` +
	`(?:[\w./~-]*/)?`

// command matches a command named by one of the alternatives in names, at a
// command position.
func command(names string) string {
	return cmdStart + `(?:` + names + `)` + wordEnd
}

// restArgs matches the rest of a command's words up to the word that follows;
// it does not cross a command separator.
const restArgs = `\s(?:[^;&|\n]*\s)?`

// notIn matches a non-empty run of characters outside the class body stop
// that is none of words, provided the caller requires a stop character or
// the end of the text right after it. RE2 has no negative lookahead, so the
// complement is spelled out letter by letter. Words are lowercase ASCII.
func notIn(stop string, words ...string) string {
	return notInNode(stop, words, 0, true)
}

func notInNode(stop string, words []string, depth int, root bool) string {
	terminal := false
	var next []byte
	for _, w := range words {
		if len(w) == depth {
			terminal = true
		} else if !slices.Contains(next, w[depth]) {
			next = append(next, w[depth])
		}
	}
	slices.Sort(next)
	anyChar := `[^` + stop + `]`
	var alts []string
	for _, c := range next {
		var sub []string
		for _, w := range words {
			if len(w) > depth && w[depth] == c {
				sub = append(sub, w)
			}
		}
		alts = append(alts, string(c)+notInNode(stop, sub, depth+1, false))
	}
	alts = append(alts, `[^`+stop+string(next)+`]`+anyChar+`*`)
	group := `(?:` + strings.Join(alts, "|") + `)`
	if !terminal && !root {
		group += "?"
	}
	return group
}

// Paths a shell command may write freely: the workspace, the session
// directories, /tmp, and the harmless devices.
var (
	writableRoots   = []string{"workspace", "sessions", "tmp"}
	writableDevices = []string{"null", "stdout", "stderr", "fd", "tty"}
)

// outsidePath matches a path word outside the writable roots, when followed
// by the end of the word: an absolute path under another top-level
// directory or device, the root itself, a path climbing out with "..", or a
// path in the home directory.
var outsidePath = `["']?(?:` +
	`/+(?:` + notIn("/"+wordStop, slices.Concat(writableRoots, []string{"dev"})...) + `|dev/+` + notIn("/"+wordStop, writableDevices...) + `)(?:/[^` + wordStop + `]*)?` +
	`|/+[^` + wordStop + `]*/\.\.(?:/[^` + wordStop + `]*)?` +
	`|/+` +
	`|(?:~[\w.-]*|\$HOME|\$\{HOME\})(?:/[^` + wordStop + `]*)?` +
	`)`
