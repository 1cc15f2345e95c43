package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute/epp/schema"
)

const table = `{"protocol":"epp/1",
 "types":{"Entry":[{"name":"path","type":"string","required":true},{"name":"size","type":"integer","required":false}]},
 "methods":[{"name":"m","kind":"request","params":[
   {"name":"id","type":"string|integer","required":true},
   {"name":"entries","type":"array<Entry>","required":false},
   {"name":"ratio","type":"number","required":false},
   {"name":"on","type":"boolean","required":false},
   {"name":"meta","type":"object","required":false}]}]}`

func TestCheck(t *testing.T) {
	t.Parallel()
	tb, err := schema.Parse([]byte(table))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := tb.Method("m")
	if !ok {
		t.Fatal("no method m")
	}
	if _, ok := tb.Method("n"); ok {
		t.Error("a method the table does not have")
	}
	for params, want := range map[string]string{
		`{"id":"a"}`: "", `{"id":7}`: "", `{"id":7,"extra":1}`: "extra",
		`{}`: "params.id is required", `{"id":null}`: "params.id is required", `{"id":1.5}`: "params.id is not string|integer",
		`{"id":1,"entries":[{"path":"/a","size":1}]}`: "", `{"id":1,"entries":[{"size":1}]}`: "params.entries[0].path is required",
		`{"id":1,"entries":{}}`: "params.entries is not an array", `{"id":1,"entries":[3]}`: "params.entries[0] is not a Entry",
		`{"id":1,"ratio":"x"}`: "params.ratio is not number", `{"id":1,"on":1}`: "params.on is not boolean",
		`{"id":1,"meta":[]}`: "params.meta is not object", `{"id":1,"meta":{"k":"v"},"ratio":0.5,"on":true}`: "",
	} {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(params), &obj); err != nil {
			t.Fatal(err)
		}
		lax, strict := tb.Check(m.Params, obj, "params", false), tb.Check(m.Params, obj, "params", true)
		switch {
		case want == "extra": // only a strict check refuses an unlisted field
			if lax != nil || strict == nil || !strings.Contains(strict.Error(), "params.extra is not in the table") {
				t.Errorf("%s: %v / %v", params, lax, strict)
			}
		case want == "" && (lax != nil || strict != nil), want != "" && (lax == nil || lax.Error() != want):
			t.Errorf("%s: %v, want %q", params, lax, want)
		}
	}
}
