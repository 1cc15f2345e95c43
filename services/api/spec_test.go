package api_test

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/schemas"
)

// The served documents are what client generators read: these tests walk
// them for what generators trip over.

// servedDocuments are the 3.1 and the 3.0 document of a fresh API.
func servedDocuments(t *testing.T) map[string]map[string]any {
	t.Helper()
	e := newEnv(t)
	out := map[string]map[string]any{}
	for _, path := range []string{"/openapi.json", "/openapi-3.0.json"} {
		out[path] = decode[map[string]any](t, e.do(t, "GET", path, "", nil).want(t, http.StatusOK))
	}
	return out
}

// TestErrorAnswersAreTheOneProblemSchema: every 4xx and 5xx response of
// every operation is application/problem+json of the Problem component,
// there is no default response, Problem's code lists exactly the error
// registry's codes, and every operation declares the statuses its shape
// implies: 401 when it needs a token, 403 when it is a command, 400, 413 and
// 415 when it takes a body, 422 and 500 always.
func TestErrorAnswersAreTheOneProblemSchema(t *testing.T) {
	t.Parallel()
	registry, err := schemas.Errors()
	if err != nil {
		t.Fatal(err)
	}
	var codes []any
	for _, c := range registry {
		codes = append(codes, c.Code)
	}
	for name, doc := range servedDocuments(t) {
		problem := resolve(doc, map[string]any{"$ref": "#/components/schemas/Problem"})
		props, _ := problem["properties"].(map[string]any)
		code, _ := props["code"].(map[string]any)
		if enum, _ := code["enum"].([]any); !slices.Equal(enum, codes) {
			t.Errorf("%s: Problem.code enum %v, want the registry's %v", name, enum, codes)
		}
		for _, op := range operationsOf(doc) {
			checkErrorResponses(t, name, op)
		}
	}
}

func checkErrorResponses(t *testing.T, doc string, op probeOp) {
	t.Helper()
	what := doc + " " + op.method + " " + op.path
	responses, _ := op.op["responses"].(map[string]any)
	for status, r := range responses {
		n, err := strconv.Atoi(status)
		if err != nil {
			t.Errorf("%s: response %q, want only numeric statuses", what, status)
			continue
		}
		rm, _ := r.(map[string]any)
		content, _ := rm["content"].(map[string]any)
		if n < 400 {
			continue
		}
		mt, _ := content["application/problem+json"].(map[string]any)
		schema, _ := mt["schema"].(map[string]any)
		if len(content) != 1 || schema["$ref"] != "#/components/schemas/Problem" {
			t.Errorf("%s %d: content %v, want only application/problem+json of Problem", what, n, content)
		}
	}
	secured := true
	if sec, ok := op.op["security"].([]any); ok && len(sec) == 0 {
		secured = false
	}
	want := []int{422, 500}
	if secured {
		want = append(want, 401)
	}
	if secured && op.method != http.MethodGet {
		want = append(want, 403)
	}
	if op.op["requestBody"] != nil {
		want = append(want, 400, 413, 415)
	}
	for _, s := range want {
		if responses[strconv.Itoa(s)] == nil {
			t.Errorf("%s does not declare %d", what, s)
		}
	}
}

// TestNoSchemaMemberInTheDocument: no schema of either document has a
// $schema property, and answers carry none (a Link header names the schema).
func TestNoSchemaMemberInTheDocument(t *testing.T) {
	t.Parallel()
	for name, doc := range servedDocuments(t) {
		components, _ := doc["components"].(map[string]any)
		all, _ := components["schemas"].(map[string]any)
		for _, s := range sortedKeys(all) {
			sm, _ := all[s].(map[string]any)
			props, _ := sm["properties"].(map[string]any)
			if _, ok := props["$schema"]; ok {
				t.Errorf("%s: schema %s has a $schema property", name, s)
			}
		}
	}
	e := newEnv(t)
	run := seedRun(e, tenantA, "running")
	r := e.do(t, "GET", "/v1/runs/"+run.RunID, tokenA, nil).want(t, http.StatusOK)
	if strings.Contains(string(r.raw), `"$schema"`) || r.header.Get("Link") != `</schemas/Run.json>; rel="describedBy"` {
		t.Errorf("answer %s with Link %q, want no $schema and the schema in the Link header", r.raw, r.header.Get("Link"))
	}
	p := e.do(t, "GET", "/v1/runs/run_nope", tokenA, nil).want(t, http.StatusNotFound)
	if strings.Contains(string(p.raw), `"$schema"`) || p.header.Get("Link") != `</schemas/Problem.json>; rel="describedBy"` {
		t.Errorf("problem %s with Link %q", p.raw, p.header.Get("Link"))
	}
}

// TestARequestThatStillCarriesSchemaIsAccepted: a client that sends back an
// object as an earlier version of the API gave it, $schema and all, is
// answered as if the member were not there.
func TestARequestThatStillCarriesSchemaIsAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := `{"$schema":"https://api.example.com/schemas/CreateRunBody.json","agentId":"coder","input":{"content":"hi"}}`
	e.do(t, "POST", "/v1/runs", tokenA, body, "Idempotency-Key", "with-schema").want(t, http.StatusAccepted)
	e.do(t, "POST", "/v1/runs", tokenA, `{"agentId":"coder","input":{"content":"hi"}}`, "Idempotency-Key", "with-schema").
		want(t, http.StatusAccepted)
	envs := e.sender.envelopes()
	if len(envs) != 2 || envs[0].RunID != envs[1].RunID || string(envs[0].Payload) != string(envs[1].Payload) {
		t.Fatalf("sent %+v, want the same create twice", envs)
	}
	// Only the top-level member is the schema link; a nested one is a field.
	e.do(t, "POST", "/v1/runs", tokenA, `{"agentId":"coder","input":{"content":"hi","$schema":"x"}}`).
		wantCode(t, http.StatusUnprocessableEntity, "validation_failed")
}

var (
	camelCase  = regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)
	pascalCase = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	// pathSegment is a literal segment (lowercase, kebab-case) or a
	// camelCase parameter.
	pathSegment = regexp.MustCompile(`^([a-z0-9]+(-[a-z0-9]+)*|\{[a-z][A-Za-z0-9]*\})$`)
	// formerName is how a deprecated parameter names its replacement.
	formerName = regexp.MustCompile(`^Deprecated: the former name of ([A-Za-z0-9]+),`)
)

// operationVerbs are the verbs operation ids start with: get and list read,
// stream streams, the others name the command they send.
var operationVerbs = []string{"get", "list", "stream", "create", "cancel", "append", "submit", "request", "send",
	"interrupt", "revoke"}

// verbOf is the lowercase start of a camelCase id.
func verbOf(id string) string {
	if i := strings.IndexFunc(id, func(r rune) bool { return r >= 'A' && r <= 'Z' }); i > 0 {
		return id[:i]
	}
	return id
}

// TestNamesAreConsistent: operation ids are a verb and a noun, they and
// query and path parameters camelCase (a deprecated former name says which name replaced it), path
// segments lowercase kebab-case, component schemas PascalCase.
func TestNamesAreConsistent(t *testing.T) {
	t.Parallel()
	doc := servedDocuments(t)["/openapi.json"]
	for _, op := range operationsOf(doc) {
		what := op.method + " " + op.path
		if id, _ := op.op["operationId"].(string); !camelCase.MatchString(id) || !slices.Contains(operationVerbs, verbOf(id)) {
			t.Errorf("%s: operationId %q is not a camelCase verb and noun (verbs: %v)", what, id, operationVerbs)
		}
		for _, seg := range strings.Split(strings.TrimPrefix(op.path, "/"), "/") {
			if !pathSegment.MatchString(seg) {
				t.Errorf("%s: path segment %q", what, seg)
			}
		}
		names := map[string]bool{}
		for _, p := range op.params() {
			names[p["name"].(string)] = true
		}
		for _, p := range op.params() {
			name, in := p["name"].(string), p["in"].(string)
			dep, _ := p["deprecated"].(bool)
			desc, _ := p["description"].(string)
			switch {
			case in == "header":
			case dep:
				if m := formerName.FindStringSubmatch(desc); m == nil || !names[m[1]] || !camelCase.MatchString(m[1]) {
					t.Errorf("%s: deprecated %s does not name the parameter that replaced it: %q", what, name, desc)
				}
			case !dep && !camelCase.MatchString(name):
				t.Errorf("%s: %s parameter %q is not camelCase", what, in, name)
			}
		}
	}
	components, _ := doc["components"].(map[string]any)
	for name := range components["schemas"].(map[string]any) {
		if !pascalCase.MatchString(name) {
			t.Errorf("component schema %q is not PascalCase", name)
		}
	}
}

// TestEveryEventTypeHasItsPayloadSchema: the events page's envelope is a
// union discriminated by type with a variant for every event type of the
// catalog, whose payload is that type's schema of schemas/v1 with the same
// properties and required ones.
func TestEveryEventTypeHasItsPayloadSchema(t *testing.T) {
	t.Parallel()
	for name, doc := range servedDocuments(t) {
		page := resolve(doc, map[string]any{"$ref": "#/components/schemas/EventPage"})
		items, _ := page["properties"].(map[string]any)["events"].(map[string]any)["items"].(map[string]any)
		envelope := resolve(doc, items)
		disc, _ := envelope["discriminator"].(map[string]any)
		mapping, _ := disc["mapping"].(map[string]any)
		oneOf, _ := envelope["oneOf"].([]any)
		if disc["propertyName"] != "type" || len(mapping) != len(events.Catalog()) || len(oneOf) != len(events.Catalog()) {
			t.Fatalf("%s: EventEnvelope %v, want a oneOf discriminated by type with every event type", name, envelope)
		}
		for _, typ := range events.Catalog() {
			ref, _ := mapping[string(typ)].(string)
			variant := resolve(doc, map[string]any{"$ref": ref})
			allOf, _ := variant["allOf"].([]any)
			if ref == "" || len(allOf) != 2 {
				t.Errorf("%s: %s has no variant (%q)", name, typ, ref)
				continue
			}
			own, _ := allOf[1].(map[string]any)
			props, _ := own["properties"].(map[string]any)
			typeSchema, _ := props["type"].(map[string]any)
			if enum, _ := typeSchema["enum"].([]any); len(enum) != 1 || enum[0] != string(typ) {
				t.Errorf("%s: %s's type is %v", name, typ, typeSchema)
			}
			payload := resolve(doc, props["payload"].(map[string]any))
			checkPayloadSchema(t, name, typ, payload)
		}
	}
}

// checkPayloadSchema compares a payload's schema in the document with its
// file in schemas/v1.
func checkPayloadSchema(t *testing.T, doc string, typ events.Type, got map[string]any) {
	t.Helper()
	want := readPayloadFile(t, typ)
	gotProps, _ := got["properties"].(map[string]any)
	wantProps, _ := want["properties"].(map[string]any)
	if !slices.Equal(sortedKeys(gotProps), sortedKeys(wantProps)) {
		t.Errorf("%s: %s payload properties %v, schemas/v1 has %v", doc, typ, sortedKeys(gotProps), sortedKeys(wantProps))
	}
	if g, w := stringsOf(got["required"]), stringsOf(want["required"]); !slices.Equal(g, w) {
		t.Errorf("%s: %s payload requires %v, schemas/v1 %v", doc, typ, g, w)
	}
}

// readPayloadFile is the payload schema of typ in schemas/v1, a reference
// into defs.json followed.
func readPayloadFile(t *testing.T, typ events.Type) map[string]any {
	t.Helper()
	read := func(name string) map[string]any {
		b, err := fs.ReadFile(schemas.V1(), name)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := read(schemas.EventPayloadFile(string(typ)))
	if ref, ok := m["$ref"].(string); ok {
		def, _ := strings.CutPrefix(ref, "defs.json#/$defs/")
		m, _ = read(schemas.DefsFile)["$defs"].(map[string]any)[def].(map[string]any)
	}
	return m
}

// stringsOf is a JSON array of strings, sorted.
func stringsOf(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
