package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// maxModelName is what model providers accept as a function name.
const maxModelName = 64

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// ModelName is the name the model is offered for tool of server:
// <server>__<tool>, with characters providers refuse replaced by "_" and,
// when that changed it or it is too long, a hash of the tool's name at
// the end, so distinct tools keep distinct names.
func ModelName(server, tool string) string {
	name := profile.MCPToolName(server, unsafeName.ReplaceAllString(tool, "_"))
	if name == profile.MCPToolName(server, tool) && len(name) <= maxModelName {
		return name
	}
	return hashedName(server, tool)
}

// hashedName is <server>__<tool, cut>-<8 hex of the tool's SHA-256>.
func hashedName(server, tool string) string {
	sum := sha256.Sum256([]byte(tool))
	suffix := "-" + hex.EncodeToString(sum[:4])
	name := profile.MCPToolName(server, unsafeName.ReplaceAllString(tool, "_"))
	return name[:min(len(name), maxModelName-len(suffix))] + suffix
}

// checkToolName refuses a tool's own name that is empty, longer than
// maxToolNameBytes, not UTF-8, or holds control or format characters (it is
// recorded in the run's items, shown by UIs and chat gateways and written to
// logs as it is), or a secret of the runtime (which no scrubbing can take out
// of a name the server must be called with). Its errors never quote a secret.
func checkToolName(name string, secrets *Secrets) error {
	switch {
	case secrets.Scrub(name) != name:
		return errors.New("a tool's name holds a secret of the runtime")
	case name == "":
		return errors.New("a tool has no name")
	case len(name) > maxToolNameBytes:
		return fmt.Errorf("tool name %q… is longer than %d bytes", strings.ToValidUTF8(name[:32], ""), maxToolNameBytes)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, hidden):
		return fmt.Errorf("tool name %q holds control or format characters", name)
	}
	return nil
}

// hidden reports whether r is a control or format character: invisible
// text that moves a terminal's cursor, reorders a line (bidirectional
// overrides) or hides characters.
func hidden(r rune) bool { return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) }

// label is a short text a server says of itself or of a tool (a title, its
// name, its version): scrubbed of secrets, without control or format
// characters, at most maxLabelBytes.
func label(s string, secrets *Secrets) string {
	s = strings.Map(func(r rune) rune {
		if hidden(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(secrets.Scrub(s), ""))
	if len(s) <= maxLabelBytes {
		return s
	}
	return strings.ToValidUTF8(s[:maxLabelBytes], "") + "…"
}
