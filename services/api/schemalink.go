package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
)

// validPublicURL checks Config.PublicURL: empty, or an absolute http(s) URL
// without query or fragment.
func validPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("api: PublicURL %q must be an absolute http(s) URL such as https://api.example.com", s)
	}
	return nil
}

// schemaLinks gives every JSON answer a `Link: <…/schemas/Name.json>;
// rel="describedBy"` header naming the JSON Schema of its body (RFC 8288),
// and never a `$schema` member in the body: huma's default link transformer
// adds `$schema` to every object it sends and to every schema of the
// document, request bodies included, which generated clients then carry as
// a field of every type. The header is how a client that wants the schema
// finds it. Links start with publicURL, or are relative; the request's Host
// and X-Forwarded-Host headers (a client can forge them) are never used.
type schemaLinks struct {
	base string // publicURL + the schemas path
	mu   sync.RWMutex
	// links is the header of each operation's answers, by operation id and
	// status.
	links map[string]map[string]string
}

// useSchemaLinks installs schemaLinks in place of huma's default $schema
// transformer.
func useSchemaLinks(c *huma.Config, publicURL string) {
	c.CreateHooks = []func(huma.Config) huma.Config{func(c huma.Config) huma.Config {
		sl := &schemaLinks{base: strings.TrimSuffix(publicURL, "/") + c.SchemasPath, links: map[string]map[string]string{}}
		c.OnAddOperation = append(c.OnAddOperation, sl.onAddOperation)
		c.Transformers = append(c.Transformers, sl.transform)
		return c
	}}
}

// onAddOperation records the Link header of each of op's responses whose
// body is a named schema.
func (sl *schemaLinks) onAddOperation(_ *huma.OpenAPI, op *huma.Operation) {
	byStatus := map[string]string{}
	for status, resp := range op.Responses {
		for _, mt := range resp.Content {
			if mt.Schema == nil || !strings.HasPrefix(mt.Schema.Ref, schemaPrefix) {
				continue
			}
			byStatus[status] = "<" + sl.base + "/" + path.Base(mt.Schema.Ref) + `.json>; rel="describedBy"`
		}
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.links[op.OperationID] = byStatus
}

// transform adds the Link header of the answer's status; the body goes out
// as it is.
func (sl *schemaLinks) transform(ctx huma.Context, status string, v any) (any, error) {
	op := ctx.Operation()
	if op == nil {
		return v, nil
	}
	sl.mu.RLock()
	link := sl.links[op.OperationID][status]
	sl.mu.RUnlock()
	if link != "" {
		ctx.AppendHeader("Link", link)
	}
	return v, nil
}

// schemaMember is the top-level member huma's schema links used to put in
// every object; clients that send an object back as they got it still send it.
var schemaMember = []byte(`"$schema"`)

// withoutSchemaMember drops a top-level "$schema" member from a JSON object
// body, so that a request a client round-trips from an earlier answer is
// accepted although no request schema declares the member any more. Any
// other body, and a body that cannot be parsed (huma answers it 400), is
// returned unchanged.
func withoutSchemaMember(body []byte) []byte {
	if !bytes.Contains(body, schemaMember) {
		return body
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || dec.More() {
		return body
	}
	if _, ok := obj["$schema"]; !ok {
		return body
	}
	delete(obj, "$schema")
	out, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return out
}
