package commands_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
)

// FuzzDecode: Decode never panics; what it accepts validates again and
// survives an encode/decode round trip unchanged.
func FuzzDecode(f *testing.F) {
	for _, typ := range commands.Types() {
		e := validEnvelope(f, typ)
		data, err := json.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		e.Payload = nil
		if data, err = json.Marshal(e); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{"", "null", "{}", "[]", `"x"`, "{", `{"type":"CreateRun","payload":5}`,
		`{"type":"CancelRun","payload":{"reason":"<&>\u2028"}}`, "{\"payload\":{\"content\":\"\xff\"}}",
		`{"commandId":"cmd_01J8XK8A1B2C3D4E5F6G7H8J9K","type":"AppendUserInput","payload":{"intent":"steer","content":"\ud800"}}`,
		`{"issuedAt":1e3}`, `{"metadata":{"a":"b","a":"c"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, p, err := commands.Decode(data)
		if err != nil {
			var ve *commands.ValidationError
			if errors.As(err, &ve) && len(ve.Problems) == 0 {
				t.Fatal("a ValidationError without problems")
			}
			return
		}
		checkAccepted(t, c, p)
	})
}

func checkAccepted(t *testing.T, c commands.Envelope, p any) {
	t.Helper()
	if p == nil {
		t.Fatal("Decode accepted a command without a payload value")
	}
	again, err := c.Validate()
	if err != nil {
		t.Fatalf("a decoded command does not validate again: %v", err)
	}
	if !reflect.DeepEqual(again, p) {
		t.Fatalf("Validate decoded %+v, Decode %+v", again, p)
	}
	enc, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("encode an accepted command: %v", err)
	}
	c2, p2, err := commands.Decode(enc)
	if err != nil {
		t.Fatalf("re-decode %s: %v", enc, err)
	}
	if !reflect.DeepEqual(p2, p) {
		t.Fatalf("payload changed in a round trip: %+v, then %+v", p, p2)
	}
	if enc2, err := json.Marshal(c2); err != nil || !bytes.Equal(enc2, enc) {
		t.Fatalf("encoding is not a fixed point (%v):\n%s\n%s", err, enc, enc2)
	}
	c2.Payload, c.Payload = nil, nil // compared above, as values and as bytes
	if !reflect.DeepEqual(c2, c) {
		t.Fatalf("envelope changed in a round trip: %+v, then %+v", c, c2)
	}
}
