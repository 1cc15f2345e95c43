package events

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// writtenEnvelopes are envelopes as the executor writes them: every field
// set or left out, payloads with nesting, escapes and non-ASCII text.
func writtenEnvelopes(t testing.TB) []Envelope {
	t.Helper()
	payloads := []any{
		ItemDeltaPayload{Delta: "a quick "},
		ItemDeltaPayload{Delta: "héllo — wörld 你好 \"quoted\"\n\t<b>&</b> \u2028"},
		ItemStartedPayload{ItemType: "tool_call", Data: json.RawMessage(`{"toolName":"shell","arguments":{"cmd":"ls -la","n":[1,2.5,-3e2,true,false,null]}}`)},
		ItemCompletedPayload{ItemType: "assistant_message", Content: strings.Repeat("long answer ", 200)},
		RunAcceptedPayload{AgentID: "demo", Input: UserInput{Content: "go"}},
		nil,
	}
	var out []Envelope
	for i, p := range payloads {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		e := Envelope{EventID: "evt_01J" + strings.Repeat("x", i), RunID: "run_abc", Seq: int64(i + 1),
			SchemaVersion: SchemaVersion, Type: ItemDelta, OccurredAt: 1764547200123, EmittedAt: 1764547200124,
			TenantID: "tenant-1", Payload: raw}
		if i%2 == 0 {
			e.PlatformSessionID, e.ItemID, e.CommandID = "sess_1", "itm_9", "cmd_7"
		}
		if p == nil {
			e.Payload = nil
		}
		out = append(out, e)
	}
	return out
}

// TestDecodeEnvelopeTakesWhatWritersWrite: an envelope encoded by either
// writer (AppendJSON, json.Marshal) decodes without reflection, and to what
// Unmarshal gives.
func TestDecodeEnvelopeTakesWhatWritersWrite(t *testing.T) {
	t.Parallel()
	for _, e := range writtenEnvelopes(t) {
		std, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range [][]byte{e.AppendJSON(nil), std} {
			got, ok := decodeEnvelope(raw)
			if !ok {
				t.Fatalf("%s: left to Unmarshal", raw)
			}
			var want Envelope
			if err := Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\ngot  %+v\nwant %+v", raw, got, want)
			}
		}
	}
}

// TestDecodeEnvelopeLeavesTheRestToUnmarshal: what the fast path is not
// sure of it leaves alone, and Decode then gives what Unmarshal gives.
func TestDecodeEnvelopeLeavesTheRestToUnmarshal(t *testing.T) {
	t.Parallel()
	const ok = `"runId":"run_1","seq":1,"schemaVersion":"v1","type":"runtime.item.delta"`
	for _, in := range []string{
		`{` + ok + `,"eventId":"evt_\u0031"}`,         // an escape where a field's string goes
		`{` + ok + `,"RunId":"run_2"}`,                // a name that matches only without regard to case
		`{` + ok + `,"run_id":"run_2"}`,               // … or with a delimiter in it
		`{` + ok + `,"ſeq":2}`,                        // … or with a character that folds to ASCII
		`{` + ok + `,"itemId":null}`,                  // null where a string goes
		`{"runId":"run_1","seq":1.0}`,                 // a number with a fraction into an int
		`{"runId":"run_1","seq":1e0}`,                 // … with an exponent
		`{"runId":"run_1","seq":01}`,                  // … with a leading zero
		`{"runId":"run_1","seq":1234567890123456789}`, // … of 19 digits
		`{"runId":"run_1","seq":-}`,                   // not a number
		"{\"runId\":\"run_\xff\",\"seq\":1}",          // invalid UTF-8 in a field
		`{` + ok + ",\"payload\":\"\xfe\"}",           // … in the payload
		`{` + ok + `,"payload":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, // deep
		`{` + ok + `,"payload":{"a":1,}}`,   // not JSON
		`{` + ok + ",\"payload\":\"\x01\"}", // a control character in a string
		`{` + ok + `,"payload":"\u12"}`,     // a short escape
		`{` + ok + `,"payload":tru}`,        // a cut literal
		`{` + ok + `} {}`,                   // trailing data
		`{` + ok,                            // cut
		`[]`,                                // not an object
		``,                                  // nothing
	} {
		if _, took := decodeEnvelope([]byte(in)); took {
			t.Errorf("%q: decoded without Unmarshal", in)
		}
		got, gotErr := Decode([]byte(in))
		want, wantErr := decodeSlowly([]byte(in))
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %+v (%v), want %+v (%v)", in, got, gotErr, want, wantErr)
		}
	}
}

// decodeSlowly is Decode with Unmarshal alone.
func decodeSlowly(data []byte) (Envelope, error) {
	var e Envelope
	if err := Unmarshal(data, &e); err != nil {
		return Envelope{}, err
	}
	if e.RunID == "" || e.Seq < 1 || e.Type == "" || e.SchemaVersion == "" {
		return Envelope{}, errMissing
	}
	return e, nil
}

var errMissing = &PayloadError{Type: "missing"}

// FuzzDecodeEnvelope: whatever the fast path decodes, Unmarshal decodes
// without error to the same envelope; and Decode succeeds or fails as
// Unmarshal alone would, with the same envelope.
//
//	go test -run '^$' -fuzz FuzzDecodeEnvelope ./events/
func FuzzDecodeEnvelope(f *testing.F) {
	for _, e := range writtenEnvelopes(f) {
		f.Add(e.AppendJSON(nil))
		std, _ := json.Marshal(e)
		f.Add(std)
	}
	f.Add([]byte(` { "runId" : "r" , "seq" : 7 , "x" : {"y":[{},[],"\u00e9\n",-0.5E+3]} } `))
	f.Add([]byte(`{"runId":"r","RUNID":"s","seq":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, ok := decodeEnvelope(data); ok {
			var want Envelope
			if err := Unmarshal(data, &want); err != nil {
				t.Fatalf("%q: decoded fast, but Unmarshal fails: %v", data, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\nfast      %+v\nUnmarshal %+v", data, got, want)
			}
		}
		got, gotErr := Decode(data)
		want, wantErr := decodeSlowly(data)
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: Decode %+v (%v), Unmarshal %+v (%v)", data, got, gotErr, want, wantErr)
		}
	})
}

// writtenPayloads are payloads of the events fastPayloads decode, as the
// executor writes them: escapes, non-ASCII text and nested data included.
var writtenPayloads = []struct {
	t Type
	p any
}{
	{ItemDelta, ItemDeltaPayload{Delta: "a quick "}},
	{ItemDelta, ItemDeltaPayload{}},
	{ItemDelta, ItemDeltaPayload{Delta: "line one\nline \"two\"\t\\ <b>&amp;</b>\u2028\u2029 \x00\x1f"}},
	{ItemDelta, ItemDeltaPayload{Delta: "héllo — wörld 你好 😀 \U0010FFFF"}},
	{ItemDelta, ItemDeltaPayload{Delta: "[output cut]", Truncated: true, OmittedBytes: 2 << 20}},
	{ItemStarted, ItemStartedPayload{ItemType: ItemAssistantMessage}},
	{ItemStarted, ItemStartedPayload{ItemType: ItemCommandExecution, Content: "ls -la\n",
		Data: json.RawMessage(`{"toolName":"shell","arguments":{"command":"ls \"x\""},"n":[1,-2.5e3,true,null]}`)}},
	{ItemCompleted, ItemCompletedPayload{ItemType: ItemAssistantMessage, Content: "the build passes ✅",
		Data: json.RawMessage(`{"finishReason":"stop","usage":{"promptTokens":1200}}`)}},
	{ItemCompleted, ItemCompletedPayload{ItemType: ItemCommandExecution, Status: ItemStatusTruncated,
		Data: json.RawMessage(`{"output":"make: done\nok\n","exitCode":0}`)}},
}

// TestDecodePayloadTakesWhatWritersWrite: each payload fastPayloads knows,
// as json.Marshal writes it, decodes without reflection, and to what
// Unmarshal gives.
func TestDecodePayloadTakesWhatWritersWrite(t *testing.T) {
	t.Parallel()
	for _, w := range writtenPayloads {
		raw, err := json.Marshal(w.p)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := fastPayloads[w.t](raw)
		if !ok {
			t.Fatalf("%s %s: left to Unmarshal", w.t, raw)
		}
		want, _ := NewPayload(w.t)
		if err := Unmarshal(raw, want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: got %+v, Unmarshal %+v", w.t, raw, got, want)
		}
	}
}

// TestDecodePayloadLeavesTheRestToUnmarshal: what a payload's fast path is
// not sure of it leaves alone, and DecodePayload then gives what Unmarshal
// gives.
func TestDecodePayloadLeavesTheRestToUnmarshal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t  Type
		in string
	}{
		{ItemDelta, `{"delta":"\ud800"}`},               // a high surrogate alone
		{ItemDelta, `{"delta":"\ud800\u0041"}`},         // … followed by no low one
		{ItemDelta, `{"delta":"\udc00"}`},               // a low surrogate alone
		{ItemDelta, `{"delta":"\x"}`},                   // no such escape
		{ItemDelta, `{"delta":"\u00g0"}`},               // not hex
		{ItemDelta, "{\"delta\":\"a\xffb\"}"},           // invalid UTF-8
		{ItemDelta, "{\"delta\":\"a\\n\xffb\"}"},        // … after an escape
		{ItemDelta, `{"Delta":"a"}`},                    // a name that matches without regard to case
		{ItemDelta, `{"delta":null}`},                   // null
		{ItemDelta, `{"delta":"a","truncated":1}`},      // a number for a bool
		{ItemDelta, `{"omittedBytes":1.5}`},             // a fraction
		{ItemDelta, `{"delta":"a"`},                     // cut
		{ItemDelta, `null`},                             // not an object
		{ItemStarted, `{"itemType":"x","status":"y"}`},  // a name the start has not (Status is the end's)…
		{ItemStarted, `{"itemType":"x","DATA":{}}`},     // … a name in another case
		{ItemStarted, `{"itemType":"x","data":{"a":}}`}, // data that is not JSON
		{ItemCompleted, `{"itemType":"x","content":7}`}, // a number for a string
		{ItemCompleted, `{"itemType":"x","content":"\udfff"}`},
	} {
		fast := fastPayloads[c.t]
		if _, took := fast([]byte(c.in)); took {
			t.Errorf("%s %q: decoded without Unmarshal", c.t, c.in)
		}
		e := Envelope{Type: c.t, Seq: 1, Payload: json.RawMessage(c.in)}
		got, gotErr := e.DecodePayload()
		want, _ := NewPayload(c.t)
		wantErr := Unmarshal([]byte(c.in), want)
		if (gotErr == nil) != (wantErr == nil) || gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q: got %+v (%v), want %+v (%v)", c.t, c.in, got, gotErr, want, wantErr)
		}
	}
}

// FuzzDecodePayload: whatever a payload's fast path decodes, Unmarshal
// decodes without error to the same payload.
//
//	go test -run '^$' -fuzz FuzzDecodePayload ./events/
func FuzzDecodePayload(f *testing.F) {
	kinds := []Type{ItemDelta, ItemStarted, ItemCompleted}
	for _, w := range writtenPayloads {
		raw, _ := json.Marshal(w.p)
		f.Add(byte(slices.Index(kinds, w.t)), raw)
	}
	f.Add(byte(0), []byte(`{"delta":"\ud83d\ude00\u00e9\/","x":[1,{"y":null}]}`))
	f.Fuzz(func(t *testing.T, kind byte, data []byte) {
		typ := kinds[int(kind)%len(kinds)]
		got, ok := fastPayloads[typ](data)
		if !ok {
			return
		}
		want, _ := NewPayload(typ)
		if err := Unmarshal(data, want); err != nil {
			t.Fatalf("%s %q: decoded fast, but Unmarshal fails: %v", typ, data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %q: fast %+v, Unmarshal %+v", typ, data, got, want)
		}
	})
}

// TestFastDecodersKnowEveryField: every exported field of the envelope and
// of each payload fastPayloads decodes, set to a value of its own and
// written by json.Marshal, comes back from the fast path as from
// Unmarshal. A field added to one of these types and not to its fast
// decoder fails here, rather than being skipped as an unknown name.
func TestFastDecodersKnowEveryField(t *testing.T) {
	t.Parallel()
	check := func(name string, v any, fast func([]byte) (any, bool), fresh func() any) {
		t.Helper()
		fillEveryField(t, reflect.ValueOf(v).Elem())
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := fast(raw)
		if !ok {
			t.Fatalf("%s %s: left to Unmarshal", name, raw)
		}
		want := fresh()
		if err := Unmarshal(raw, want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(want, v) {
			t.Errorf("%s %s:\nfast      %+v\nUnmarshal %+v\nwritten   %+v", name, raw, got, want, v)
		}
	}
	check("envelope", &Envelope{}, func(raw []byte) (any, bool) {
		e, ok := decodeEnvelope(raw)
		return &e, ok
	}, func() any { return &Envelope{} })
	for typ, fast := range fastPayloads {
		p, err := NewPayload(typ)
		if err != nil {
			t.Fatal(err)
		}
		check(string(typ), p, fast, func() any { p, _ := NewPayload(typ); return p })
	}
}

// fillEveryField sets each exported field of the struct v to a value that
// is not its zero value, telling the fields apart.
func fillEveryField(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch {
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.SetBytes([]byte(`{"field":` + strconv.Itoa(i) + `}`))
		case f.Kind() == reflect.String:
			f.SetString("value of " + v.Type().Field(i).Name)
		case f.Kind() == reflect.Int64:
			f.SetInt(int64(1000 + i))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("%s.%s: a field of kind %s; teach fillEveryField and the fast decoder", v.Type(), v.Type().Field(i).Name, f.Kind())
		}
	}
}
