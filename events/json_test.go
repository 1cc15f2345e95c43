package events_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// TestUnmarshalDecodesAsEncodingJSONDoes: the log's decoder gives what
// encoding/json gives, value and failure alike, for the inputs where JSON
// decoders tend to differ.
func TestUnmarshalDecodesAsEncodingJSONDoes(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"runId":"run_1","seq":3,"type":"runtime.run.started","schemaVersion":"1","payload":{"a":1}}`,
		`{"RUNID":"run_1","Seq":3}`,                    // names match without regard to case
		`{"runId":"run_1","runId":"run_2"}`,            // the last duplicate wins
		`{"runId":"run_\xff","payload":"\xfe"}`,        // invalid UTF-8 is replaced
		`{"runId":"run_1","unknown":{"deep":[1,2,3]}}`, // unknown fields are ignored
		`{"runId":"run_1","payload":null}`,             // a null payload
		`{"seq":1e3}`,                                  // a number with an exponent into an int
		`{"seq":99999999999999999999}`,                 // out of range
		`{"seq":"3"}`,                                  // a string where a number goes
		`{"runId":"run_1",}`,                           // not JSON
		`{"runId":"\u00e9\ud800"}`,                     // a lone surrogate
		` {"itemId":"i"} `,                             // surrounding space
		`{"itemId":"i"} {}`,                            // trailing data
		`[]`,                                           // not an object
	} {
		var got, want events.Envelope
		gotErr, wantErr := events.Unmarshal([]byte(in), &got), json.Unmarshal([]byte(in), &want)
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %+v (%v), encoding/json %+v (%v)", in, got, gotErr, want, wantErr)
		}
	}
}
