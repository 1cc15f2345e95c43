package mcp

import (
	"context"
	"encoding/json"
	"fmt"
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
	// maxToolNameBytes bounds a tool's own name: MCP asks for 1 to 128
	// characters of [A-Za-z0-9_.-].
	maxToolNameBytes = 128
	// maxLabelBytes bounds a tool's title and the server's name and version.
	maxLabelBytes = 256
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
	sec := set.Secrets()
	snap := profile.MCPServerSnapshot{Name: srv.Name, Transport: srv.TransportOrDefault(),
		ServerName: label(name, sec), ServerVersion: label(version, sec), ProtocolVersion: label(protocol, sec)}
	if snap.Tools, err = describeTools(srv.Name, tools, set.Secrets()); err != nil {
		return profile.MCPServerSnapshot{}, fmt.Errorf("MCP server %s: %w", srv.Name, err)
	}
	return snap, nil
}

// describeTools converts a server's tools, each named for the model and
// scrubbed of secrets. A server that lists a tool twice, or a tool whose
// name is not acceptable (checkToolName), is refused.
func describeTools(server string, tools []*sdk.Tool, secrets *Secrets) ([]profile.MCPTool, error) {
	if len(tools) > MaxTools {
		return nil, fmt.Errorf("lists %d tools; at most %d are offered to a model", len(tools), MaxTools)
	}
	out := make([]profile.MCPTool, 0, len(tools))
	own, taken := map[string]bool{}, map[string]bool{}
	total := 0
	for _, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("lists a null tool")
		}
		if err := checkToolName(t.Name, secrets); err != nil {
			return nil, err
		}
		if own[t.Name] {
			return nil, fmt.Errorf("lists tool %q twice", t.Name)
		}
		own[t.Name] = true
		d, err := describeTool(server, t, secrets)
		if err != nil {
			return nil, err
		}
		if taken[d.Name] {
			d.Name = hashedName(server, t.Name)
		}
		taken[d.Name] = true
		total += len(d.Name) + len(d.Tool) + len(d.Title) + len(d.Description) + len(d.InputSchema) + len(d.OutputSchema) +
			len(d.Annotations)
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
		if ann, err = scrubbedJSON(t.Annotations, secrets.Scrub); err != nil {
			return profile.MCPTool{}, fmt.Errorf("tool %q: annotations: %w", t.Name, err)
		}
	}
	desc := secrets.Scrub(t.Description)
	if len(desc) > maxDescriptionBytes {
		desc = strings.ToValidUTF8(desc[:maxDescriptionBytes], "") + " …"
	}
	return profile.MCPTool{Name: ModelName(server, t.Name), Tool: t.Name, Title: label(t.Title, secrets),
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
	raw, err := scrubbedJSON(schema, secrets.Scrub)
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
