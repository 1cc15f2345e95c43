package events

import (
	"encoding/json"
	"reflect"
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

// TestDecodeDeltaTakesWhatWritersWrite: a delta's payload as json.Marshal
// writes it, escapes included, decodes without reflection, and to what
// Unmarshal gives.
func TestDecodeDeltaTakesWhatWritersWrite(t *testing.T) {
	t.Parallel()
	for _, p := range []ItemDeltaPayload{
		{Delta: "a quick "},
		{},
		{Delta: "line one\nline \"two\"\t\\ <b>&amp;</b>\u2028\u2029 \x00\x1f"},
		{Delta: "héllo — wörld 你好 😀 \U0010FFFF"},
		{Delta: "[output cut: 2 MiB not streamed]", Truncated: true, OmittedBytes: 2 << 20},
	} {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeDelta(raw)
		if !ok {
			t.Fatalf("%s: left to Unmarshal", raw)
		}
		var want ItemDeltaPayload
		if err := Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if *got != want || want != p {
			t.Errorf("%s: got %+v, Unmarshal %+v, written %+v", raw, *got, want, p)
		}
	}
}

// TestDecodeDeltaLeavesTheRestToUnmarshal: what the delta's fast path is
// not sure of it leaves alone, and DecodePayload then gives what Unmarshal
// gives.
func TestDecodeDeltaLeavesTheRestToUnmarshal(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"delta":"\ud800"}`,          // a high surrogate alone
		`{"delta":"\ud800\u0041"}`,    // … followed by no low one
		`{"delta":"\udc00"}`,          // a low surrogate alone
		`{"delta":"\x"}`,              // no such escape
		`{"delta":"\u00g0"}`,          // not hex
		"{\"delta\":\"a\xffb\"}",      // invalid UTF-8
		"{\"delta\":\"a\\n\xffb\"}",   // … after an escape
		`{"Delta":"a"}`,               // a name that matches without regard to case
		`{"delta":null}`,              // null
		`{"delta":"a","truncated":1}`, // a number for a bool
		`{"omittedBytes":1.5}`,        // a fraction
		`{"delta":"a"`,                // cut
		`null`,                        // not an object
	} {
		if _, took := decodeDelta([]byte(in)); took {
			t.Errorf("%q: decoded without Unmarshal", in)
		}
		e := Envelope{Type: ItemDelta, Seq: 1, Payload: json.RawMessage(in)}
		got, gotErr := e.DecodePayload()
		want := new(ItemDeltaPayload)
		wantErr := Unmarshal([]byte(in), want)
		if (gotErr == nil) != (wantErr == nil) || gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %+v (%v), want %+v (%v)", in, got, gotErr, want, wantErr)
		}
	}
}

// FuzzDecodeDelta: whatever the delta's fast path decodes, Unmarshal
// decodes without error to the same payload.
//
//	go test -run '^$' -fuzz FuzzDecodeDelta ./events/
func FuzzDecodeDelta(f *testing.F) {
	for _, s := range []string{"a quick ", "x\n\"y\"\t<&>\u2028 😀 \\", ""} {
		raw, _ := json.Marshal(ItemDeltaPayload{Delta: s, Truncated: s == "", OmittedBytes: int64(len(s))})
		f.Add(raw)
	}
	f.Add([]byte(`{"delta":"\ud83d\ude00\u00e9\/","x":[1,{"y":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeDelta(data)
		if !ok {
			return
		}
		var want ItemDeltaPayload
		if err := Unmarshal(data, &want); err != nil {
			t.Fatalf("%q: decoded fast, but Unmarshal fails: %v", data, err)
		}
		if *got != want {
			t.Fatalf("%q: fast %+v, Unmarshal %+v", data, *got, want)
		}
	})
}
