package commands_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
)

// FuzzDecode: Decode never panics; what it accepts validates again and
// survives an encode/decode round trip unchanged; what it refuses after the
// JSON decoded is a *ValidationError naming each bad field by its JSON path,
// and validating again finds the same problems.
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
			checkRefused(t, data, c, err)
			return
		}
		checkAccepted(t, c, p)
	})
}

// fieldPath is the JSON path of every field Validate can name; metadata
// problems name the key after payload.metadata.
var fieldPath = regexp.MustCompile(`^(commandId|idempotencyKey|runId|platformSessionId|tenantId|actor\.type|actor\.id|` +
	`issuedAt|schemaVersion|type|payload|payload\.[a-zA-Z]+(\.[a-zA-Z]+)?|payload\.metadata\..*)$`)

func checkRefused(t *testing.T, data []byte, c commands.Envelope, err error) {
	t.Helper()
	var ve *commands.ValidationError
	if json.Unmarshal(data, new(commands.Envelope)) != nil {
		if errors.As(err, &ve) || !strings.HasPrefix(err.Error(), "decode command envelope: ") {
			t.Fatalf("malformed JSON: want a decode error, got %v", err)
		}
		return
	}
	if !errors.As(err, &ve) || len(ve.Problems) == 0 {
		t.Fatalf("want a *ValidationError with problems, got %#v", err)
	}
	for _, p := range ve.Problems {
		if !fieldPath.MatchString(p.Field) || p.Message == "" {
			t.Fatalf("problem %+v: not a field path with a message", p)
		}
	}
	_, again := c.Validate()
	var ve2 *commands.ValidationError
	// Metadata problems come in map order, so the problems are compared as sets.
	if !errors.As(again, &ve2) || !sameProblems(ve.Problems, ve2.Problems) {
		t.Fatalf("validating again: %v, first %v", again, err)
	}
}

func sameProblems(a, b []commands.FieldError) bool {
	key := func(p commands.FieldError) string { return p.Field + "\x00" + p.Message }
	as, bs := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		as[i] = key(a[i])
	}
	for i := range b {
		bs[i] = key(b[i])
	}
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
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
