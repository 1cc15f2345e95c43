package schemas

import (
	"embed"
	"io/fs"
	"path"
	"sort"
)

// BaseURI is the absolute URI that every v1 schema's $id starts with: a
// schema's $id is BaseURI followed by its file name, and $refs between the
// files are relative to it. Nothing is served there; load the files from V1.
const BaseURI = "https://xbot-runtime.github.io/xbot/schemas/v1/"

// Files of the v1 contracts, relative to V1.
const (
	// CommandEnvelopeFile is the schema of a command envelope.
	CommandEnvelopeFile = "command.envelope.json"
	// EventEnvelopeFile is the schema of an event envelope.
	EventEnvelopeFile = "event.envelope.json"
	// DefsFile holds the definitions the other schemas reference.
	DefsFile = "defs.json"
	// ErrorsFile is the error-code registry (not a schema).
	ErrorsFile = "errors.json"
	// ErrorsSchemaFile is the schema of ErrorsFile.
	ErrorsSchemaFile = "errors.schema.json"
	// ExamplesDir holds valid golden examples named command.<Type>[.<variant>].json
	// and event.<type>[.<variant>].json.
	ExamplesDir = "examples"
	// InvalidExamplesDir holds examples that break one field each; its
	// manifest.json names the field and the reason.
	InvalidExamplesDir = "examples/invalid"
)

//go:embed v1
var v1 embed.FS

// V1 returns the protocol v1 contracts, rooted at the v1 directory.
func V1() fs.FS {
	sub, err := fs.Sub(v1, "v1")
	if err != nil {
		panic("schemas: embedded v1 directory is missing: " + err.Error()) // a build without the files is broken
	}
	return sub
}

// CommandPayloadFile returns the file of the payload schema of a command type,
// e.g. "command.CreateRun.json".
func CommandPayloadFile(commandType string) string { return "command." + commandType + ".json" }

// EventPayloadFile returns the file of the payload schema of an event type,
// e.g. "event.runtime.run.accepted.json".
func EventPayloadFile(eventType string) string { return "event." + eventType + ".json" }

// SchemaFiles lists, sorted, every JSON Schema file of V1: each top-level
// .json file except the error registry.
func SchemaFiles() []string {
	entries, err := fs.ReadDir(V1(), ".")
	if err != nil {
		panic("schemas: read embedded v1 directory: " + err.Error()) // embedded data cannot fail to read
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && path.Ext(e.Name()) == ".json" && e.Name() != ErrorsFile {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// SchemaID returns the $id of a schema file of V1.
func SchemaID(file string) string { return BaseURI + file }
