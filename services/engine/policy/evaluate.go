package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Evaluate decides a call of tool with the given arguments, the JSON text
// exactly as the model produced it. The first matching rule decides; with no
// match the Config's Default does. Arguments that are not a JSON object can
// only be matched by rules on the whole text.
func (p *Policy) Evaluate(tool string, arguments json.RawMessage) Decision {
	return p.EvaluateIn(workspaceDir, tool, arguments)
}

// EvaluateIn is Evaluate for a run whose relative paths resolve in dir, a
// clean absolute sandbox path (the run's working directory): a path tool's
// relative path is matched as the tool will open it, joined to dir.
func (p *Policy) EvaluateIn(dir, tool string, arguments json.RawMessage) Decision {
	return p.evaluate(dir, tool, "", arguments)
}

// evaluate is EvaluateIn for a tool that an MCP server calls own ("" for
// none): rules naming the server's tool by that name match it, whatever
// name the model was offered.
func (p *Policy) evaluate(dir, tool, own string, arguments json.RawMessage) Decision {
	if dir == "" {
		dir = workspaceDir
	}
	a := &args{raw: arguments, dir: dir}
	for i := range p.rules {
		r := &p.rules[i]
		if r.matchesTool(tool, own) && r.matches(tool, a) {
			return Decision{Action: r.Action, RuleID: r.ID, Reason: r.reason()}
		}
	}
	return Decision{Action: p.def, Reason: fmt.Sprintf("no policy rule matched; the default is %s", p.def)}
}

// matches reports whether r decides a call of tool, one it applies to
// (matchesTool), with arguments a.
func (r *compiled) matches(tool string, a *args) bool {
	value, ok := a.value(r.Argument)
	if !ok {
		return false
	}
	return r.matchArgument(tool, value, a.dir)
}

// matchesTool reports whether the rule applies to calls of tool, which an
// MCP server calls own ("" when unknown or no MCP tool).
func (r *compiled) matchesTool(tool, own string) bool {
	if r.Server == "" {
		return r.Tool == "*" || r.Tool == tool
	}
	prefix := r.Server + mcpSeparator
	if !strings.HasPrefix(tool, prefix) {
		return false
	}
	return r.Tool == "" || r.Tool == "*" || r.Tool == tool || prefix+r.Tool == tool || own != "" && r.Tool == own
}

func (r *compiled) reason() string {
	if r.Reason != "" {
		return r.Reason
	}
	return fmt.Sprintf("policy rule %q decides %s", r.ID, r.Action)
}

// value returns the text a rule on argument name matches: the whole
// arguments for "", else the argument's string value or, when it is not a
// string, its JSON text. ok is false when there is no such argument.
func (a *args) value(name string) (string, bool) {
	if name == "" {
		return string(a.raw), true
	}
	if !a.decoded {
		a.decoded = true
		a.fields = objectFields(a.raw)
	}
	// Look the argument up as encoding/json fills a struct, which is how the
	// tools read it: names match case-insensitively and the last one wins.
	var v json.RawMessage
	for _, f := range a.fields {
		if strings.EqualFold(f.name, name) {
			v = f.value
		}
	}
	if v == nil {
		return "", false
	}
	var s string
	if v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s, true
	}
	return string(v), true
}

// field is one member of a JSON object.
type field struct {
	name  string
	value json.RawMessage
}

// objectFields returns the members of a JSON object in order, duplicates
// included, or nil when raw is not a valid JSON object.
func objectFields(raw json.RawMessage) []field {
	if !json.Valid(raw) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		name, isName := tok.(string)
		var value json.RawMessage
		if err != nil || !isName || dec.Decode(&value) != nil {
			return nil
		}
		fields = append(fields, field{name: name, value: value})
	}
	return fields
}
