package profile

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MCPServer is one MCP server of an agent (agents.yaml mcpServers): a
// command run inside the run's sandbox and spoken to over its standard
// streams (stdio), or a remote server at URL. The tools it lists when a run
// starts are offered to the model as <name>__<tool> and frozen into the
// run's capability snapshot.
type MCPServer struct {
	// Name namespaces the server's tools: 1-32 characters of [a-z0-9-],
	// starting with a letter or digit, unique in the profile. Required.
	Name string `yaml:"name" json:"name"`
	// Command is the argv of a stdio server, run inside the run's sandbox
	// (its isolation, limits and environment; no secret reaches it).
	Command []string `yaml:"command" json:"command,omitempty"`
	// URL is a remote server's endpoint (http or https), called by the
	// runtime with the executor's network.
	URL string `yaml:"url" json:"url,omitempty"`
	// Transport of a remote server: "http" (streamable HTTP, the default)
	// or "sse" (the HTTP+SSE transport of older servers). Empty for stdio.
	Transport string `yaml:"transport" json:"transport,omitempty"`
	// Headers are sent with every request to a remote server. A value is a
	// template: ${NAME} stands for the runtime secret NAME (mcp_secrets),
	// put in by the runtime when it connects; $$ is a literal $. Only the
	// template is frozen into snapshots, never a secret. A header whose name
	// says it carries a credential (Authorization, Cookie, *key*, *token*,
	// *secret*, *auth*) must name a secret.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Optional lets the run start without the server when it cannot be
	// reached or listed; the snapshot records why it was left out.
	// Default false: the run's start fails.
	Optional bool `yaml:"optional" json:"optional,omitempty"`
	// StartTimeout bounds connecting to the server and listing its tools.
	// Default DefaultMCPStartTimeout.
	StartTimeout time.Duration `yaml:"startTimeout" json:"startTimeout,omitempty"`
	// CallTimeout bounds one tool call; the call is then cancelled and
	// fails. Default DefaultMCPCallTimeout.
	CallTimeout time.Duration `yaml:"callTimeout" json:"callTimeout,omitempty"`
}

// MCP transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Defaults of MCPServer.
const (
	// DefaultMCPStartTimeout covers a cold start of a stdio server under
	// node or python in a fresh sandbox, and a remote server's handshake.
	DefaultMCPStartTimeout = 30 * time.Second
	// DefaultMCPCallTimeout is the shell tool's default timeout: long
	// enough for a search or a build, short enough that a hung server does
	// not hold a run for long.
	DefaultMCPCallTimeout = 120 * time.Second
	// maxMCPTimeout bounds both timeouts (a run's default wall time is 30 min).
	maxMCPTimeout = time.Hour
	// MaxMCPServers bounds a profile's servers: each is a process or a
	// connection per running run.
	MaxMCPServers = 16
)

// ToolSeparator joins a server's name and its tool's name in the name
// offered to the model.
const ToolSeparator = "__"

var (
	mcpName     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	secretRef   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	headerToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
)

// reservedHeaders are set by the transport itself; a profile may not.
var reservedHeaders = []string{"Accept", "Connection", "Content-Length", "Content-Type", "Host",
	"Last-Event-Id", "Mcp-Protocol-Version", "Mcp-Session-Id", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// TransportOrDefault is the server's transport: stdio for a command, else
// Transport, else http.
func (s MCPServer) TransportOrDefault() string {
	switch {
	case len(s.Command) > 0:
		return TransportStdio
	case s.Transport == "":
		return TransportHTTP
	}
	return s.Transport
}

// StartTimeoutOrDefault is StartTimeout or its default.
func (s MCPServer) StartTimeoutOrDefault() time.Duration {
	if s.StartTimeout == 0 {
		return DefaultMCPStartTimeout
	}
	return s.StartTimeout
}

// CallTimeoutOrDefault is CallTimeout or its default.
func (s MCPServer) CallTimeoutOrDefault() time.Duration {
	if s.CallTimeout == 0 {
		return DefaultMCPCallTimeout
	}
	return s.CallTimeout
}

// Secrets returns the runtime secrets the server's headers name, sorted.
func (s MCPServer) Secrets() []string {
	var out []string
	for _, v := range s.Headers {
		parts, _ := ParseHeaderTemplate(v)
		for _, p := range parts {
			if p.Secret != "" && !slices.Contains(out, p.Secret) {
				out = append(out, p.Secret)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TemplatePart is a piece of a header template: literal text or the name
// of a secret.
type TemplatePart struct {
	Text   string
	Secret string
}

// ParseHeaderTemplate splits a header value into literal text and ${NAME}
// secret references ($$ is a literal $).
func ParseHeaderTemplate(v string) ([]TemplatePart, error) {
	var parts []TemplatePart
	var lit strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '$' {
			lit.WriteByte(v[i])
			continue
		}
		switch {
		case strings.HasPrefix(v[i:], "$$"):
			lit.WriteByte('$')
			i++
		case strings.HasPrefix(v[i:], "${"):
			end := strings.IndexByte(v[i:], '}')
			if end < 0 {
				return nil, errors.New("${ without a closing }")
			}
			name := v[i+2 : i+end]
			if !secretRef.MatchString(name) {
				return nil, fmt.Errorf("secret name %q must match %s", name, secretRef)
			}
			if lit.Len() > 0 {
				parts = append(parts, TemplatePart{Text: lit.String()})
				lit.Reset()
			}
			parts = append(parts, TemplatePart{Secret: name})
			i += end
		default:
			return nil, errors.New("a lone $ (write $$ for a literal $, ${NAME} for a secret)")
		}
	}
	if lit.Len() > 0 {
		parts = append(parts, TemplatePart{Text: lit.String()})
	}
	return parts, nil
}

// credentialHeader reports whether a header's name says it carries a
// credential, which must then come from a secret, not from the profile.
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	for _, w := range []string{"key", "token", "secret", "auth", "password", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// validateMCP reports every problem of the profile's MCP servers.
func validateMCP(servers []MCPServer) []error {
	var errs []error
	if len(servers) > MaxMCPServers {
		errs = append(errs, fmt.Errorf("mcpServers: at most %d servers", MaxMCPServers))
	}
	seen := map[string]bool{}
	for i, s := range servers {
		for _, err := range s.problems() {
			errs = append(errs, fmt.Errorf("mcpServers[%d] (%q): %w", i, s.Name, err))
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("mcpServers[%d]: name %q is used twice", i, s.Name))
		}
		seen[s.Name] = true
	}
	return errs
}

func (s MCPServer) problems() []error {
	var errs []error
	if !mcpName.MatchString(s.Name) {
		errs = append(errs, fmt.Errorf("name must match %s", mcpName))
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		errs = append(errs, errors.New("give a command (stdio) or a url (remote), not both"))
	case len(s.Command) > 0:
		errs = append(errs, s.stdioProblems()...)
	case s.URL != "":
		errs = append(errs, s.remoteProblems()...)
	default:
		errs = append(errs, errors.New("a command (stdio) or a url (remote) is required"))
	}
	if s.StartTimeout < 0 || s.CallTimeout < 0 || s.StartTimeout > maxMCPTimeout || s.CallTimeout > maxMCPTimeout {
		errs = append(errs, fmt.Errorf("startTimeout and callTimeout must be between 0 (default) and %s", maxMCPTimeout))
	}
	return errs
}

func (s MCPServer) stdioProblems() []error {
	var errs []error
	if s.Transport != "" && s.Transport != TransportStdio {
		errs = append(errs, fmt.Errorf("transport %q: a command speaks stdio", s.Transport))
	}
	if len(s.Headers) > 0 {
		errs = append(errs, errors.New("headers are for remote servers; a stdio server gets no secret"))
	}
	for _, a := range s.Command {
		if strings.ContainsRune(a, 0) || !utf8.ValidString(a) {
			errs = append(errs, errors.New("command arguments must be UTF-8 text without NUL"))
			break
		}
	}
	if s.Command[0] == "" {
		errs = append(errs, errors.New("command[0] (the program) is empty"))
	}
	return errs
}

func (s MCPServer) remoteProblems() []error {
	var errs []error
	if s.Transport != "" && s.Transport != TransportHTTP && s.Transport != TransportSSE {
		errs = append(errs, fmt.Errorf("transport %q is not %s or %s", s.Transport, TransportHTTP, TransportSSE))
	}
	u, err := url.Parse(s.URL)
	switch {
	case err != nil:
		errs = append(errs, errors.New("url does not parse"))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		errs = append(errs, errors.New("url must be http:// or https:// with a host"))
	case u.User != nil:
		errs = append(errs, errors.New("url must not hold credentials (use headers naming secrets)"))
	}
	for name, v := range s.Headers {
		errs = append(errs, headerProblems(name, v)...)
	}
	return errs
}

func headerProblems(name, v string) []error {
	var errs []error
	if !headerToken.MatchString(name) {
		errs = append(errs, fmt.Errorf("header name %q is not an HTTP token", name))
	}
	if slices.Contains(reservedHeaders, http.CanonicalHeaderKey(name)) {
		errs = append(errs, fmt.Errorf("header %q is set by the transport", name))
	}
	parts, err := ParseHeaderTemplate(v)
	if err != nil {
		return append(errs, fmt.Errorf("header %q: %w", name, err))
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		errs = append(errs, fmt.Errorf("header %q: value holds a line break or NUL", name))
	}
	named := slices.ContainsFunc(parts, func(p TemplatePart) bool { return p.Secret != "" })
	if credentialHeader(name) && !named {
		errs = append(errs, fmt.Errorf("header %q carries a credential: its value must name a secret (${NAME}), not hold it", name))
	}
	return errs
}

// MCPToolName is the name the model is offered for tool of server.
func MCPToolName(server, tool string) string { return server + ToolSeparator + tool }
