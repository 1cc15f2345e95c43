package api

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/schemas"
)

// The event envelope in the OpenAPI document is typed by its type: the
// component EventEnvelope is a oneOf of one variant per event type of the
// catalog, with a discriminator on type. A variant (RunAcceptedEvent) is
// allOf the envelope's fields (EventFields) and its type, a one-value enum,
// and payload, its payload schema (RunAcceptedPayload). Generated clients
// get a union they can switch on: oapi-codegen a type with As…/From…
// methods and ValueByDiscriminator, openapi-typescript a discriminated
// union of object types.
//
// The schemas are schemas/v1's JSON Schemas of the envelope and of each
// payload, converted (jsonschema.go): references into defs.json are inlined,
// const becomes a one-value enum and patternProperties an
// additionalProperties schema (the key pattern stays in the description),
// which OpenAPI 3.0 tools read as well. The files stay the exact contract.

const (
	eventEnvelopeName = "EventEnvelope"
	eventFieldsName   = "EventFields"
)

// eventNames are the component names of an event type's variant and
// payload: runtime.item.awaiting_approval → ItemAwaitingApprovalEvent,
// ItemAwaitingApprovalPayload (the names of the catalog's constants).
func eventNames(t events.Type) (variant, payload string) {
	var b strings.Builder
	for _, word := range strings.FieldsFunc(strings.TrimPrefix(string(t), "runtime."), func(r rune) bool {
		return r == '.' || r == '_'
	}) {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return b.String() + "Event", b.String() + "Payload"
}

// registerEventSchemas adds the envelope union, its variants and every
// payload schema to r, once. It panics if schemas/v1 holds a construct the
// conversion does not know: the embedded files are part of the build, and
// this package's tests convert them all.
func registerEventSchemas(r huma.Registry) {
	if _, ok := r.Map()[eventEnvelopeName]; ok {
		return
	}
	conv, err := newJSONSchemas(schemas.V1())
	if err != nil {
		panic("api: " + err.Error())
	}
	fields, required, err := conv.envelopeFields()
	if err != nil {
		panic("api: " + err.Error())
	}
	r.Map()[eventFieldsName] = fields
	union := &huma.Schema{Description: "An event envelope exactly as committed to the run's log; its type names " +
		"its payload's schema. Event types are never renamed, but new ones may be added: a reader skips a type " +
		"it does not know.", Discriminator: &huma.Discriminator{PropertyName: "type", Mapping: map[string]string{}}}
	for _, t := range events.Catalog() {
		variant, payload := eventNames(t)
		p, err := conv.file(schemas.EventPayloadFile(string(t)))
		if err != nil {
			panic("api: " + err.Error())
		}
		r.Map()[payload] = p
		r.Map()[variant] = &huma.Schema{Description: "A " + string(t) + " event.", AllOf: []*huma.Schema{
			{Ref: schemaPrefix + eventFieldsName},
			{Type: huma.TypeObject, Required: append([]string{"type", "payload"}, required[t]...),
				Properties: map[string]*huma.Schema{
					"type":    {Type: huma.TypeString, Enum: []any{string(t)}},
					"payload": {Ref: schemaPrefix + payload},
				}},
		}}
		union.OneOf = append(union.OneOf, &huma.Schema{Ref: schemaPrefix + variant})
		union.Discriminator.Mapping[string(t)] = schemaPrefix + variant
	}
	r.Map()[eventEnvelopeName] = union
}

// jsonSchemas converts schemas/v1's files into OpenAPI schemas.
type jsonSchemas struct {
	files fs.FS
	defs  map[string]any
}

func newJSONSchemas(files fs.FS) (*jsonSchemas, error) {
	defs, err := readSchemaFile(files, schemas.DefsFile)
	if err != nil {
		return nil, err
	}
	d, _ := defs["$defs"].(map[string]any)
	return &jsonSchemas{files: files, defs: d}, nil
}

func readSchemaFile(files fs.FS, name string) (map[string]any, error) {
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode schema %s: %w", name, err)
	}
	return m, nil
}

// file converts one schema file.
func (c *jsonSchemas) file(name string) (*huma.Schema, error) {
	m, err := readSchemaFile(c.files, name)
	if err != nil {
		return nil, err
	}
	s, err := c.convert(m)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s.Description = strings.TrimSpace(s.Description + " (schemas/v1/" + name + ")")
	return s, nil
}

// envelopeFields converts the envelope schema's properties other than type
// and payload, and reads which further fields its if/then rules require of
// each type (itemId of item events, commandId of command outcomes).
func (c *jsonSchemas) envelopeFields() (*huma.Schema, map[events.Type][]string, error) {
	m, err := readSchemaFile(c.files, schemas.EventEnvelopeFile)
	if err != nil {
		return nil, nil, err
	}
	props, _ := m["properties"].(map[string]any)
	fields := &huma.Schema{Type: huma.TypeObject, Properties: map[string]*huma.Schema{},
		Description: "The fields every event envelope has besides type and payload (schemas/v1/" + schemas.EventEnvelopeFile + ")."}
	for name, p := range props {
		if name == "type" || name == "payload" {
			continue
		}
		pm, _ := p.(map[string]any)
		if fields.Properties[name], err = c.convert(pm); err != nil {
			return nil, nil, fmt.Errorf("envelope property %s: %w", name, err)
		}
	}
	for _, r := range stringList(m["required"]) {
		if r != "type" && r != "payload" {
			fields.Required = append(fields.Required, r)
		}
	}
	required, err := requiredByType(m)
	if err != nil {
		return nil, nil, err
	}
	return fields, required, nil
}

// requiredByType reads the envelope schema's if/then rules: the fields
// each type requires besides those of every envelope.
func requiredByType(envelope map[string]any) (map[events.Type][]string, error) {
	var rules []struct {
		If struct {
			Properties struct {
				Type struct {
					Const events.Type `json:"const"`
				} `json:"type"`
			} `json:"properties"`
		} `json:"if"`
		Then struct {
			Required []string `json:"required"`
		} `json:"then"`
	}
	b, err := json.Marshal(envelope["allOf"])
	if err != nil {
		return nil, fmt.Errorf("envelope rules: %w", err)
	}
	if err := json.Unmarshal(b, &rules); err != nil {
		return nil, fmt.Errorf("envelope rules: %w", err)
	}
	out := map[events.Type][]string{}
	for _, r := range rules {
		out[r.If.Properties.Type.Const] = r.Then.Required
	}
	return out, nil
}
