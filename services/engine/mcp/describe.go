package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Bounds of what one server may put into a run's snapshot (and the
// model's context): the snapshot is one event, and a Kafka record.
const (
	// MaxTools is the most tools one server may list.
	MaxTools = 128
	// maxSchemaBytes bounds a tool's input or output schema.
	maxSchemaBytes = 64 << 10
	// maxDescriptionBytes bounds a tool's description (cut beyond).
	maxDescriptionBytes = 8 << 10
	// maxServerBytes bounds everything one server lists.
	maxServerBytes = 256 << 10
)

// List connects to srv through set and describes it for a run's snapshot:
// what it said of itself and its tools, named for the model.
func List(ctx context.Context, set *Set, srv profile.MCPServer) (profile.MCPServerSnapshot, error) {
	conn, err := set.Conn(ctx, srv.Name)
	if err != nil {
		return profile.MCPServerSnapshot{}, err
	}
	lctx, cancel := context.WithTimeout(ctx, srv.StartTimeoutOrDefault())
	defer cancel()
	tools, err := conn.ListTools(lctx)
	if err != nil {
		return profile.MCPServerSnapshot{}, fmt.Errorf("MCP server %s: tools/list: %w", srv.Name, err)
	}
	name, version, protocol := conn.Info()
	snap := profile.MCPServerSnapshot{Name: srv.Name, Transport: srv.TransportOrDefault(),
		ServerName: set.Secrets().Scrub(name), ServerVersion: set.Secrets().Scrub(version), ProtocolVersion: protocol}
	if snap.Tools, err = describeTools(srv.Name, tools, set.Secrets()); err != nil {
		return profile.MCPServerSnapshot{}, fmt.Errorf("MCP server %s: %w", srv.Name, err)
	}
	return snap, nil
}

// describeTools converts a server's tools, each named for the model and
// scrubbed of secrets.
func describeTools(server string, tools []*sdk.Tool, secrets *Secrets) ([]profile.MCPTool, error) {
	if len(tools) > MaxTools {
		return nil, fmt.Errorf("lists %d tools; at most %d are offered to a model", len(tools), MaxTools)
	}
	out := make([]profile.MCPTool, 0, len(tools))
	taken := map[string]bool{}
	total := 0
	for _, t := range tools {
		d, err := describeTool(server, t, secrets)
		if err != nil {
			return nil, err
		}
		if taken[d.Name] {
			d.Name = hashedName(server, t.Name)
		}
		taken[d.Name] = true
		total += len(d.Description) + len(d.InputSchema) + len(d.OutputSchema) + len(d.Annotations)
		if total > maxServerBytes {
			return nil, fmt.Errorf("its tools' descriptions and schemas take more than %d bytes", maxServerBytes)
		}
		out = append(out, d)
	}
	return out, nil
}

func describeTool(server string, t *sdk.Tool, secrets *Secrets) (profile.MCPTool, error) {
	in, err := schemaJSON(t.InputSchema, secrets, true)
	if err != nil {
		return profile.MCPTool{}, fmt.Errorf("tool %q: inputSchema: %w", t.Name, err)
	}
	outSchema, err := schemaJSON(t.OutputSchema, secrets, false)
	if err != nil {
		return profile.MCPTool{}, fmt.Errorf("tool %q: outputSchema: %w", t.Name, err)
	}
	var ann json.RawMessage
	if t.Annotations != nil {
		if ann, err = scrubbedJSON(t.Annotations, secrets); err != nil {
			return profile.MCPTool{}, fmt.Errorf("tool %q: annotations: %w", t.Name, err)
		}
	}
	desc := secrets.Scrub(t.Description)
	if len(desc) > maxDescriptionBytes {
		desc = strings.ToValidUTF8(desc[:maxDescriptionBytes], "") + " …"
	}
	return profile.MCPTool{Name: ModelName(server, t.Name), Tool: t.Name, Title: secrets.Scrub(t.Title),
		Description: desc, InputSchema: in, OutputSchema: outSchema, Annotations: ann}, nil
}

// schemaJSON encodes a schema the SDK decoded; an input schema must be an
// object schema (a missing "type" is taken as "object").
func schemaJSON(schema any, secrets *Secrets, input bool) (json.RawMessage, error) {
	if schema == nil {
		if input {
			return json.RawMessage(`{"type":"object"}`), nil
		}
		return nil, nil
	}
	raw, err := scrubbedJSON(schema, secrets)
	if err != nil {
		return nil, err
	}
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxSchemaBytes)
	}
	if !input {
		return raw, nil
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	switch obj["type"] {
	case nil:
		obj["type"] = "object"
		return json.Marshal(obj)
	case "object":
		return raw, nil
	}
	return nil, fmt.Errorf(`"type" is %v; a tool's arguments are an object`, obj["type"])
}

// scrubbedJSON encodes v and removes secrets from its text; a value that
// no longer parses once scrubbed is refused.
func scrubbedJSON(v any, secrets *Secrets) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := secrets.Scrub(string(raw))
	if !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("holds a secret of the runtime")
	}
	return json.RawMessage(s), nil
}

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
