package profile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ModelScripted is the model name of the scripted model, which plays the
// profile's Script instead of calling a provider.
const ModelScripted = "scripted"

// Limits bound a run's work.
type Limits struct {
	MaxTurns     int           `yaml:"maxTurns" json:"maxTurns"`
	MaxToolCalls int           `yaml:"maxToolCalls" json:"maxToolCalls"`
	MaxWallTime  time.Duration `yaml:"maxWallTime" json:"maxWallTime"`
}

// Turn is one model response of the scripted model.
type Turn struct {
	// Text is the reply. "{{input}}" is replaced by the run's input.
	Text string `yaml:"text" json:"text"`
	// ChunkChars splits the reply into deltas of this many characters. Default 16.
	ChunkChars int `yaml:"chunkChars" json:"chunkChars"`
	// Delay is the pause before each delta, as a streaming model would take. Default 0.
	Delay time.Duration `yaml:"delay" json:"delay"`
}

// Profile describes one agent.
type Profile struct {
	ID           string   `yaml:"id" json:"id"`
	Model        string   `yaml:"model" json:"model"`
	SystemPrompt string   `yaml:"systemPrompt" json:"systemPrompt"`
	Tools        []string `yaml:"tools" json:"tools"`
	Limits       Limits   `yaml:"limits" json:"limits"`
	Script       []Turn   `yaml:"script" json:"script"`
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Validate reports every problem with the profile.
func (p Profile) Validate() error {
	var errs []error
	if !idPattern.MatchString(p.ID) {
		errs = append(errs, fmt.Errorf("profile %q: id must be 1-64 characters of [A-Za-z0-9._-]", p.ID))
	}
	if p.Model == "" {
		errs = append(errs, fmt.Errorf("profile %q: model is required", p.ID))
	}
	if p.Model == ModelScripted && len(p.Script) == 0 {
		errs = append(errs, fmt.Errorf("profile %q: the scripted model needs at least one script turn", p.ID))
	}
	for i, t := range p.Script {
		if t.Text == "" || t.ChunkChars < 0 || t.Delay < 0 {
			errs = append(errs, fmt.Errorf("profile %q: script turn %d needs text, chunkChars >= 0, delay >= 0", p.ID, i+1))
		}
	}
	return errors.Join(errs...)
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
