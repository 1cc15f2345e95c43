package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// probeOp is an operation of the document.
type probeOp struct {
	method, path string
	op           map[string]any
}

func (o probeOp) params() []map[string]any {
	ps, _ := o.op["parameters"].([]any)
	out := make([]map[string]any, 0, len(ps))
	for _, p := range ps {
		if pm, ok := p.(map[string]any); ok {
			out = append(out, pm)
		}
	}
	return out
}

// operationsOf lists doc's operations in a stable order.
func operationsOf(doc map[string]any) []probeOp {
	paths, _ := doc["paths"].(map[string]any)
	var out []probeOp
	for _, path := range sortedKeys(paths) {
		ops, _ := paths[path].(map[string]any)
		for _, method := range sortedKeys(ops) {
			if op, ok := ops[method].(map[string]any); ok {
				out = append(out, probeOp{method: strings.ToUpper(method), path: path, op: op})
			}
		}
	}
	return out
}

// own is op's request by tenant A's owner on the seeded resources: a body
// with the request schema's required fields, a fresh idempotency key, no
// wait.
func (p *prober) own(op probeOp) probeReq {
	r := probeReq{method: op.method, path: op.path, token: tokenA, header: http.Header{}}
	for name, id := range p.ids {
		r.path = strings.ReplaceAll(r.path, "{"+name+"}", id)
	}
	q := url.Values{}
	for _, pm := range op.params() {
		switch pm["name"] {
		case "wait":
			q.Set("wait", "0")
		case "Idempotency-Key":
			r.header.Set("Idempotency-Key", fmt.Sprintf("probe-%d", p.n))
		}
	}
	r.rawQuery = q.Encode()
	if s := requestSchema(p.doc, op.op); s != nil {
		body, _ := sampleValue(p.doc, s).(map[string]any)
		if _, ok := body["itemId"]; ok {
			body["itemId"] = events.NewID("itm") // the command's validation wants an item id
		}
		r.body, _ = json.Marshal(body)
	}
	return r
}

// generic sends op the requests every operation is probed with.
func (p *prober) generic(op probeOp) {
	own := p.own(op)
	p.send(own)
	for _, tok := range []string{"", "no-such-token", readerToken, tokenB, tokenAlice} {
		r := own
		r.token = tok
		p.send(r)
	}
	p.send(with(own, func(r *probeReq) { r.rawQuery = "x=%FF" }))
	if own.body != nil || op.method != http.MethodGet {
		p.send(with(own, func(r *probeReq) { r.header = cloneHeader(r.header, "X-Actor-Id", "someone-else") }))
	}
	p.badParams(op, own)
	if own.body != nil {
		p.badBodies(own)
	}
}

// badParams sends each parameter bad values, and both names of a renamed one.
func (p *prober) badParams(op probeOp, own probeReq) {
	for _, pm := range op.params() {
		name, in := pm["name"].(string), pm["in"].(string)
		for _, v := range []string{"x", "-1", strings.Repeat("r", 400), "a b"} {
			p.send(with(own, func(r *probeReq) {
				switch in {
				case "path":
					r.path = strings.Replace(op.path, "{"+name+"}", url.PathEscape(v), 1)
					for id, val := range p.ids {
						r.path = strings.ReplaceAll(r.path, "{"+id+"}", val)
					}
				case "query":
					q, _ := url.ParseQuery(r.rawQuery)
					q.Set(name, v)
					r.rawQuery = q.Encode()
				case "header":
					r.header = cloneHeader(r.header, name, v)
				}
			}))
		}
		if dep, _ := pm["deprecated"].(bool); dep && in == "query" {
			p.send(with(own, func(r *probeReq) { r.rawQuery = aliasConflict(op, name) }))
		}
	}
}

// aliasConflict is a query giving a deprecated parameter and the one it
// names (the parameter its description names) different values.
func aliasConflict(op probeOp, old string) string {
	for _, pm := range op.params() {
		name, _ := pm["name"].(string)
		if dep, _ := pm["deprecated"].(bool); !dep && pm["in"] == "query" && name != old &&
			strings.EqualFold(strings.ReplaceAll(old, "_", ""), name) {
			return url.Values{old: {"1"}, name: {"2"}}.Encode()
		}
	}
	return old + "=1"
}

// badBodies sends bodies that are not JSON, missing, too large, of another
// content type and with an unknown field, and the valid body with a
// $schema member, which must be taken as without it.
func (p *prober) badBodies(own probeReq) {
	huge := []byte(`{"reason":"` + strings.Repeat("x", 70<<10) + `"}`)
	for _, b := range [][]byte{[]byte(`{"reason":`), {}, huge, []byte(`{"noSuchField":1}`)} {
		p.send(with(own, func(r *probeReq) { r.body = b }))
	}
	p.send(with(own, func(r *probeReq) { r.header = cloneHeader(r.header, "Content-Type", "text/plain") }))
	var obj map[string]any
	if err := json.Unmarshal(own.body, &obj); err != nil {
		p.t.Fatal(err)
	}
	obj["$schema"] = "https://api.example.com/schemas/X.json"
	withSchema, _ := json.Marshal(obj)
	want := p.send(with(own, func(r *probeReq) {
		r.header = cloneHeader(r.header, "Idempotency-Key", "schema-"+r.header.Get("Idempotency-Key"))
	}))
	got := p.send(with(own, func(r *probeReq) {
		r.body = withSchema
		r.header = cloneHeader(r.header, "Idempotency-Key", "schema2-"+r.header.Get("Idempotency-Key"))
	}))
	if got != want {
		p.t.Errorf("%s %s with a $schema member: %d, without: %d", own.method, own.path, got, want)
	}
}

// with is a copy of r changed by f.
func with(r probeReq, f func(*probeReq)) probeReq {
	r.header = r.header.Clone()
	f(&r)
	return r
}

func cloneHeader(h http.Header, name, value string) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	out.Set(name, value)
	return out
}

// probeReq is one request of a probe.
type probeReq struct {
	method, path, rawQuery, token string
	header                        http.Header
	body                          []byte
}

// send sends r and returns the answer's status; a stream that opens is
// closed at once.
func (p *prober) send(r probeReq) int {
	p.t.Helper()
	res, cancel := p.do(r)
	defer cancel()
	if res == nil {
		return 0
	}
	defer res.Body.Close()
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		_, _ = io.Copy(io.Discard, res.Body)
	}
	return res.StatusCode
}

// open sends r, whose answer must be a stream, and returns what closes it.
func (p *prober) open(r probeReq) func() {
	p.t.Helper()
	res, cancel := p.do(r)
	if res == nil || res.StatusCode != http.StatusOK {
		p.t.Fatalf("%s %s: %v, want an open stream", r.method, r.path, res)
	}
	return func() {
		_ = res.Body.Close()
		cancel()
	}
}

func (p *prober) do(r probeReq) (*http.Response, context.CancelFunc) {
	p.t.Helper()
	p.n++
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	u := p.e.srv.URL + r.path
	if r.rawQuery != "" {
		u += "?" + r.rawQuery
	}
	var body io.Reader
	if r.body != nil {
		body = strings.NewReader(string(r.body))
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		p.t.Fatalf("%s %s: %v", r.method, u, err)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	res, err := p.e.srv.Client().Do(req)
	if err != nil {
		p.t.Errorf("%s %s: %v", r.method, u, err)
		return nil, cancel
	}
	return res, cancel
}
