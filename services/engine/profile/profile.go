package profile

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/policy"
)

// ModelScripted is the model name of the scripted model, which plays the
// profile's Script instead of calling a provider.
const ModelScripted = "scripted"

// Limits bound a run's work. Zero values take the defaults of WithDefaults.
type Limits struct {
	// MaxTurns bounds the model calls of a run.
	MaxTurns int `yaml:"maxTurns" json:"maxTurns"`
	// MaxToolCalls bounds the tool calls of a run.
	MaxToolCalls int `yaml:"maxToolCalls" json:"maxToolCalls"`
	// MaxWallTime bounds the time from the run's start to its end, pauses included.
	MaxWallTime time.Duration `yaml:"maxWallTime" json:"maxWallTime"`
	// ToolConcurrency is how many tool calls of one model response run at once.
	ToolConcurrency int `yaml:"toolConcurrency" json:"toolConcurrency"`
	// MaxStreamedOutputBytes caps what one tool call's streamed output takes
	// on the log: its deltas' text plus DeltaEnvelopeBytes per delta
	// (so a trickle of tiny writes is bounded too). Past it the item gets one
	// truncation marker and no more deltas. The item's final event still
	// carries the preview, and an output too large for the context is still
	// offloaded as the tool captured it.
	MaxStreamedOutputBytes int `yaml:"maxStreamedOutputBytes" json:"maxStreamedOutputBytes,omitempty"`
	// MaxEventBytes bounds the bytes of a run's events on the log; a run past
	// it fails with budget_exhausted at its next safe point.
	MaxEventBytes int64 `yaml:"maxEventBytes" json:"maxEventBytes,omitempty"`
}

// Default limits.
const (
	DefaultMaxTurns        = 50
	DefaultMaxToolCalls    = 200
	DefaultMaxWallTime     = 30 * time.Minute
	DefaultToolConcurrency = 4
	// DefaultMaxStreamedOutputBytes is 64 KiB: twice the offload threshold,
	// the first screens of a command's output live, while a command that
	// prints gigabytes adds about two dozen deltas to the log, not thousands.
	DefaultMaxStreamedOutputBytes = 64 << 10
	// DefaultMaxEventBytes is 16 MiB: room for DefaultMaxToolCalls calls
	// that each stream their full 64 KiB, and small enough that one run's
	// log stays a small part of the executor's memory and of each view.
	DefaultMaxEventBytes = 16 << 20
	// EventBytesReserve is the part of MaxEventBytes kept for the events that
	// end a run (the failed open items, runtime.run.failed, the pending
	// commands closed as no_effect): the budget is exhausted when a run's
	// events pass MaxEventBytes minus this, so ending it stays within
	// MaxEventBytes. 64 KiB holds hundreds of such events.
	EventBytesReserve = 64 << 10
	// DeltaEnvelopeBytes is what MaxStreamedOutputBytes charges for each
	// delta besides its text: an envelope's ids, type, times and tenant take
	// about 300 bytes.
	DeltaEnvelopeBytes = 300
	// MinMaxEventBytes is the smallest MaxEventBytes a profile may set.
	MinMaxEventBytes = 2 * EventBytesReserve
)

// WithDefaults fills zero limits with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxTurns == 0 {
		l.MaxTurns = DefaultMaxTurns
	}
	if l.MaxToolCalls == 0 {
		l.MaxToolCalls = DefaultMaxToolCalls
	}
	if l.MaxWallTime == 0 {
		l.MaxWallTime = DefaultMaxWallTime
	}
	if l.ToolConcurrency == 0 {
		l.ToolConcurrency = DefaultToolConcurrency
	}
	if l.MaxStreamedOutputBytes == 0 {
		l.MaxStreamedOutputBytes = DefaultMaxStreamedOutputBytes
	}
	if l.MaxEventBytes == 0 {
		l.MaxEventBytes = DefaultMaxEventBytes
	}
	return l
}

// Turn is one model response of the scripted model.
type Turn struct {
	// Text is the reply. "{{input}}" is replaced by the latest user message.
	Text string `yaml:"text" json:"text"`
	// Reasoning is streamed before the text as the model's reasoning.
	Reasoning string `yaml:"reasoning" json:"reasoning,omitempty"`
	// ToolCalls are the calls the response makes.
	ToolCalls []ScriptedCall `yaml:"toolCalls" json:"toolCalls,omitempty"`
	// Error makes the call fail instead: rate_limited, server_error,
	// context_overflow or bad_request.
	Error string `yaml:"error" json:"error,omitempty"`
	// ErrorAttempts > 0 raises Error only for the turn's first ErrorAttempts
	// attempts (model.Request.Attempt); later attempts play the turn's text
	// and calls, so "overflow once, then succeed after the compaction" can be
	// scripted. 0 raises Error on every attempt.
	ErrorAttempts int `yaml:"errorAttempts" json:"errorAttempts,omitempty"`
	// ChunkChars splits the reply into deltas of this many characters. Default 16.
	ChunkChars int `yaml:"chunkChars" json:"chunkChars"`
	// Delay is the pause before each delta, as a streaming model would take. Default 0.
	Delay time.Duration `yaml:"delay" json:"delay"`
}

// ScriptedCall is a tool call of a scripted turn. Arguments is the JSON text
// the model "sends"; it may be malformed on purpose.
type ScriptedCall struct {
	Name      string `yaml:"name" json:"name"`
	Arguments string `yaml:"arguments" json:"arguments"`
}

// ScriptedErrors are the errors a scripted turn may raise.
var ScriptedErrors = []string{"rate_limited", "server_error", "context_overflow", "bad_request"}

// Sandbox is what a profile asks of its compute environment.
type Sandbox struct {
	// Network allows outbound network access from tools. Default off.
	Network bool `yaml:"network" json:"network"`
	// Env lists NAME=value pairs given to tool processes; nothing else of the
	// runtime's environment reaches the sandbox.
	Env []string `yaml:"env" json:"env,omitempty"`
	// MemoryMiB bounds the memory of all the sandbox's processes together;
	// a command over it is killed and its tool call fails. 0 takes the
	// runtime's sandbox_memory_mib (default 1024).
	MemoryMiB int64 `yaml:"memoryMiB" json:"memoryMiB,omitempty"`
	// Pids bounds the processes and threads running at once in the
	// sandbox. 0 takes sandbox_pids (default 256).
	Pids int64 `yaml:"pids" json:"pids,omitempty"`
	// CPUMillis is the sandbox's CPU quota in thousandths of a core. 0 takes
	// sandbox_cpu_millis (default 1000, one core).
	CPUMillis int64 `yaml:"cpuMillis" json:"cpuMillis,omitempty"`
	// WorkspaceMiB bounds the disk used by the sandbox key's directories
	// (workspace, session context, the runs' files). 0 takes
	// sandbox_workspace_mib (default 1024).
	WorkspaceMiB int64 `yaml:"workspaceMiB" json:"workspaceMiB,omitempty"`
	// AllowHosts lists IPv4 addresses or CIDRs a networked sandbox may reach
	// although they are in a range it may not (loopback, link-local with
	// cloud metadata, private and reserved ranges, this host's addresses),
	// e.g. an internal package mirror. Default none: only public addresses.
	AllowHosts []string `yaml:"allowHosts" json:"allowHosts,omitempty"`
	// Mounts are host directories the sandbox sees read-only at their
	// target, e.g. where stdio MCP servers or toolchains are installed
	// outside the system directories (/usr is there already). The sandbox
	// user must be able to read them.
	Mounts []compute.ReadOnlyMount `yaml:"mounts" json:"mounts,omitempty"`
}

// Profile describes one agent.
type Profile struct {
	ID string `yaml:"id" json:"id"`
	// Model is the provider's model name, or "scripted" for the scripted model.
	// Empty takes the configured llm_model.
	Model string `yaml:"model" json:"model"`
	// BaseURL overrides llm_base_url for this agent.
	BaseURL string `yaml:"baseUrl" json:"baseUrl,omitempty"`
	// APIKeyEnv names the environment variable holding this agent's API key,
	// overriding llm_api_key. Keys are never written in profiles.
	APIKeyEnv    string   `yaml:"apiKeyEnv" json:"apiKeyEnv,omitempty"`
	SystemPrompt string   `yaml:"systemPrompt" json:"systemPrompt"`
	Tools        []string `yaml:"tools" json:"tools"`
	Limits       Limits   `yaml:"limits" json:"limits"`
	Sandbox      Sandbox  `yaml:"sandbox" json:"sandbox"`
	Script       []Turn   `yaml:"script" json:"script"`
	// Policy decides each tool call: allow, require_approval or deny.
	Policy policy.Config `yaml:"policy" json:"policy"`
	// PauseTTL is how long a run may stay paused (awaiting approval or an
	// answer) before it expires. Default DefaultPauseTTL.
	PauseTTL time.Duration `yaml:"pauseTtl" json:"pauseTtl"`
	// Context governs the model context: compaction and large-output offload.
	Context Context `yaml:"context" json:"context"`
	// RunOptions bounds the per-run options a caller may ask for and names
	// the defaults of a run that asks for none.
	RunOptions RunOptions `yaml:"runOptions" json:"runOptions"`
	// MCPServers are the agent's MCP servers; their tools are offered as
	// <server>__<tool>.
	MCPServers []MCPServer `yaml:"mcpServers" json:"mcpServers,omitempty"`
	// Skills are the skills the agent uses, by name and version range.
	Skills []SkillRef `yaml:"skills" json:"skills,omitempty"`
}

// DefaultPauseTTL is the pause TTL of a profile that sets none.
const DefaultPauseTTL = 24 * time.Hour

// Context governs what a run sends to its model.
type Context struct {
	// Window is the model's context window in tokens. Default 128000.
	Window int `yaml:"window" json:"window"`
	// CompactAt is the share of Window at which the context is compacted
	// before a model request or after tool results. Default 0.8.
	CompactAt float64 `yaml:"compactAt" json:"compactAt"`
	// OffloadBytes is the tool output size above which the output is stored
	// in the run's output directory and the model gets a preview and a ref.
	// Default 16384.
	OffloadBytes int `yaml:"offloadBytes" json:"offloadBytes"`
}

// Context defaults.
const (
	DefaultContextWindow = 128000
	DefaultCompactAt     = 0.8
	DefaultOffloadBytes  = 16 << 10
)

// WithDefaults fills zero fields with the defaults.
func (c Context) WithDefaults() Context {
	if c.Window == 0 {
		c.Window = DefaultContextWindow
	}
	if c.CompactAt == 0 {
		c.CompactAt = DefaultCompactAt
	}
	if c.OffloadBytes == 0 {
		c.OffloadBytes = DefaultOffloadBytes
	}
	return c
}

// PauseTTLOrDefault is the profile's pause TTL, or the default.
func (p Profile) PauseTTLOrDefault() time.Duration {
	if p.PauseTTL == 0 {
		return DefaultPauseTTL
	}
	return p.PauseTTL
}

var (
	idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	envName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func (t Turn) validate() error {
	if t.ChunkChars < 0 || t.Delay < 0 || t.ErrorAttempts < 0 {
		return errors.New("chunkChars, delay and errorAttempts must be >= 0")
	}
	if t.ErrorAttempts > 0 && t.Error == "" {
		return errors.New("errorAttempts needs an error")
	}
	if t.Error != "" {
		known := false
		for _, e := range ScriptedErrors {
			known = known || t.Error == e
		}
		if !known {
			return fmt.Errorf("error %q is not one of %s", t.Error, strings.Join(ScriptedErrors, ", "))
		}
		if t.ErrorAttempts == 0 {
			return nil // the turn never answers
		}
	}
	if t.Text == "" && len(t.ToolCalls) == 0 {
		return errors.New("a turn needs text or tool calls")
	}
	for _, c := range t.ToolCalls {
		if c.Name == "" {
			return errors.New("a tool call needs a name")
		}
	}
	return nil
}

// Validate reports every problem with the profile.
func (p Profile) Validate() error {
	var errs []error
	if !idPattern.MatchString(p.ID) {
		errs = append(errs, fmt.Errorf("profile %q: id must be 1-64 characters of [A-Za-z0-9._-]", p.ID))
	}
	if p.Model == ModelScripted && len(p.Script) == 0 {
		errs = append(errs, fmt.Errorf("profile %q: the scripted model needs at least one script turn", p.ID))
	}
	if p.Model != ModelScripted && len(p.Script) > 0 {
		errs = append(errs, fmt.Errorf("profile %q: a script needs model: scripted", p.ID))
	}
	for i, t := range p.Script {
		if err := t.validate(); err != nil {
			errs = append(errs, fmt.Errorf("profile %q: script turn %d: %w", p.ID, i+1, err))
		}
	}
	l := p.Limits
	if l.MaxTurns < 0 || l.MaxToolCalls < 0 || l.MaxWallTime < 0 || l.ToolConcurrency < 0 || l.ToolConcurrency > 64 {
		errs = append(errs, fmt.Errorf("profile %q: limits must be >= 0 (toolConcurrency <= 64)", p.ID))
	}
	if err := p.Sandbox.validate(); err != nil {
		errs = append(errs, fmt.Errorf("profile %q: sandbox: %w", p.ID, err))
	}
	if l.MaxStreamedOutputBytes < 0 {
		errs = append(errs, fmt.Errorf("profile %q: limits.maxStreamedOutputBytes must be >= 0", p.ID))
	}
	if l.MaxEventBytes != 0 && l.MaxEventBytes < MinMaxEventBytes {
		errs = append(errs, fmt.Errorf("profile %q: limits.maxEventBytes must be at least %d (the room kept for the events that end a run)", p.ID, MinMaxEventBytes))
	}
	for _, kv := range p.Sandbox.Env {
		if name, _, ok := strings.Cut(kv, "="); !ok || !envName.MatchString(name) {
			errs = append(errs, fmt.Errorf("profile %q: sandbox env %q must be NAME=value", p.ID, kv))
		}
	}
	errs = append(errs, p.Sandbox.validateHosts(p.ID)...)
	errs = append(errs, p.capabilityErrors()...)
	errs = append(errs, p.runOptionErrors()...)
	if _, err := policy.Compile(p.Policy); err != nil {
		errs = append(errs, fmt.Errorf("profile %q: policy: %w", p.ID, err))
	}
	if p.PauseTTL < 0 {
		errs = append(errs, fmt.Errorf("profile %q: pauseTtl must be >= 0", p.ID))
	}
	if c := p.Context; c.Window < 0 || c.CompactAt < 0 || c.CompactAt > 1 || c.OffloadBytes < 0 {
		errs = append(errs, fmt.Errorf("profile %q: context: window and offloadBytes must be >= 0, compactAt between 0 and 1", p.ID))
	}
	if p.APIKeyEnv != "" && !envName.MatchString(p.APIKeyEnv) {
		errs = append(errs, fmt.Errorf("profile %q: apiKeyEnv %q is not a variable name", p.ID, p.APIKeyEnv))
	} else if reservedEnv(p.APIKeyEnv) {
		errs = append(errs, fmt.Errorf("profile %q: apiKeyEnv %q names one of xbot's own settings or a database password; use a variable that holds only this agent's model key", p.ID, p.APIKeyEnv))
	}
	return errors.Join(errs...)
}

// reservedEnv reports whether name is a variable an agent's model key must
// not be read from: the key is sent to the agent's baseUrl, so naming
// XBOT_API_TOKENS (or any XBOT_ setting) or a database client's password
// variable would send that secret to a model provider.
func reservedEnv(name string) bool {
	upper := strings.ToUpper(name)
	return strings.HasPrefix(upper, "XBOT_") || upper == "PGPASSWORD" || upper == "CLICKHOUSE_PASSWORD"
}

// DemoTools are the tools of the demo profile when it runs on a real model.
var DemoTools = []string{"shell", "read_file", "write_file", "list_files", "ask_user"}

// DemoLLM is the demo profile on a real model (the configured llm_model)
// with the built-in tools.
func DemoLLM() Profile {
	return Profile{
		ID:    "demo",
		Model: "", // the configured llm_model
		SystemPrompt: "You are the xbot demo agent. You can run shell commands and read and write files in " +
			"your workspace (/workspace). Ask the user with ask_user when a request is ambiguous. Be brief.",
		Tools:  DemoTools,
		Limits: Limits{MaxTurns: 20, MaxToolCalls: 40, MaxWallTime: 10 * time.Minute},
	}
}

// Demo is the built-in profile: a scripted model that greets and echoes.
func Demo() Profile {
	return Profile{
		ID:           "demo",
		Model:        ModelScripted,
		SystemPrompt: "You are the xbot demo agent.",
		Limits:       Limits{MaxTurns: 8, MaxWallTime: 10 * time.Minute},
		Script: []Turn{{
			Text:       "Hello from xbot! You said: {{input}}",
			ChunkChars: 8,
			Delay:      20 * time.Millisecond,
		}},
	}
}

// Render returns the turn's text with the run's input filled in.
func (t Turn) Render(input string) string { return strings.ReplaceAll(t.Text, "{{input}}", input) }

// Catalog holds the profiles by id.
type Catalog struct {
	byID map[string]Profile
}

// NewCatalog returns a catalog of the demo profile plus ps (which may override demo).
func NewCatalog(ps ...Profile) (*Catalog, error) {
	c := &Catalog{byID: map[string]Profile{"demo": Demo()}}
	var errs []error
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.ID] {
			errs = append(errs, fmt.Errorf("profile %q is defined twice", p.ID))
			continue
		}
		seen[p.ID] = true
		if err := p.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		c.byID[p.ID] = p
	}
	return c, errors.Join(errs...)
}

// file is the layout of agents.yaml.
type file struct {
	Agents []Profile `yaml:"agents"`
}

// Load reads agents.yaml at path ("" = only the built-in demo profile).
func Load(path string) (*Catalog, error) {
	if path == "" {
		return NewCatalog()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("agent profiles: %w", err)
	}
	var f file
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) { // io.EOF: no document, only demo
		return nil, fmt.Errorf("agent profiles %s: %w", path, err)
	}
	c, err := NewCatalog(f.Agents...)
	if err != nil {
		return nil, fmt.Errorf("agent profiles %s: %w", path, err)
	}
	return c, nil
}

// Get returns the profile with the given id.
func (c *Catalog) Get(id string) (Profile, bool) {
	p, ok := c.byID[id]
	return p, ok
}

// Has reports whether a profile exists.
func (c *Catalog) Has(id string) bool { _, ok := c.byID[id]; return ok }

// IDs lists the profile ids, sorted.
func (c *Catalog) IDs() []string {
	out := make([]string, 0, len(c.byID))
	for id := range c.byID {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// IsBuiltinDemo reports whether the catalog's demo profile is the built-in
// scripted one (agents.yaml did not redefine it).
func (c *Catalog) IsBuiltinDemo() bool {
	d, ok := c.byID["demo"]
	return ok && d.Model == ModelScripted && d.SystemPrompt == Demo().SystemPrompt && len(d.Script) == len(Demo().Script) &&
		d.Script[0].Text == Demo().Script[0].Text
}

// With returns a copy of the catalog with p added or replacing the profile
// with the same id.
func (c *Catalog) With(p Profile) (*Catalog, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n := &Catalog{byID: make(map[string]Profile, len(c.byID)+1)}
	for id, q := range c.byID {
		n.byID[id] = q
	}
	n.byID[p.ID] = p
	return n, nil
}

// validateHosts checks that every allowHosts entry is an IPv4 address or CIDR.
func (s Sandbox) validateHosts(id string) []error {
	var errs []error
	for _, h := range s.AllowHosts {
		a, err := netip.ParseAddr(h)
		if err != nil {
			var pfx netip.Prefix
			pfx, err = netip.ParsePrefix(h)
			a = pfx.Addr()
		}
		if err != nil || !a.Is4() {
			errs = append(errs, fmt.Errorf("profile %q: sandbox allowHosts %q must be an IPv4 address or CIDR", id, h))
		}
	}
	return errs
}
