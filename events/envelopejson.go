package events

import (
	"encoding/json"
	"math"
	"strconv"
)

// AppendJSON appends e encoded as json.Marshal encodes it, for an envelope
// whose Payload is what Seal makes (the output of json.Marshal: valid,
// compact, HTML characters escaped). json.Marshal checks and compacts a
// json.RawMessage again; the executor encodes every event it appends, and
// that second pass was most of the cost.
func (e Envelope) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"eventId":`...)
	dst = appendJSONString(dst, e.EventID)
	dst = append(dst, `,"runId":`...)
	dst = appendJSONString(dst, e.RunID)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"schemaVersion":`...)
	dst = appendJSONString(dst, e.SchemaVersion)
	dst = append(dst, `,"type":`...)
	dst = appendJSONString(dst, string(e.Type))
	dst = append(dst, `,"occurredAt":`...)
	dst = strconv.AppendInt(dst, e.OccurredAt, 10)
	dst = append(dst, `,"emittedAt":`...)
	dst = strconv.AppendInt(dst, e.EmittedAt, 10)
	if e.PlatformSessionID != "" {
		dst = append(dst, `,"platformSessionId":`...)
		dst = appendJSONString(dst, e.PlatformSessionID)
	}
	dst = append(dst, `,"tenantId":`...)
	dst = appendJSONString(dst, e.TenantID)
	if e.ItemID != "" {
		dst = append(dst, `,"itemId":`...)
		dst = appendJSONString(dst, e.ItemID)
	}
	if e.CommandID != "" {
		dst = append(dst, `,"commandId":`...)
		dst = appendJSONString(dst, e.CommandID)
	}
	dst = append(dst, `,"payload":`...)
	if e.Payload == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, e.Payload...)
	}
	return append(dst, '}')
}

// JSONSizeHint is the length AppendJSON gives e when its strings need no
// escapes, and a lower bound otherwise: what a caller sizes its buffer by.
func (e Envelope) JSONSizeHint() int {
	n := len(`{"eventId":"","runId":"","seq":,"schemaVersion":"","type":"","occurredAt":,"emittedAt":,"tenantId":"","payload":}`) +
		len(e.EventID) + len(e.RunID) + decimalLen(e.Seq) + len(e.SchemaVersion) + len(e.Type) +
		decimalLen(e.OccurredAt) + decimalLen(e.EmittedAt) + len(e.TenantID) + len(e.Payload)
	if e.Payload == nil {
		n += len("null")
	}
	if e.PlatformSessionID != "" {
		n += len(`,"platformSessionId":""`) + len(e.PlatformSessionID)
	}
	if e.ItemID != "" {
		n += len(`,"itemId":""`) + len(e.ItemID)
	}
	if e.CommandID != "" {
		n += len(`,"commandId":""`) + len(e.CommandID)
	}
	return n
}

// decimalLen is the number of bytes strconv.AppendInt writes for v.
func decimalLen(v int64) int {
	n := 1
	if v < 0 {
		n++
		if v == math.MinInt64 {
			return 20
		}
		v = -v
	}
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// appendJSONString appends s as json.Marshal encodes a string: as it is
// when it holds only printable ASCII that needs no escape, else through
// json.Marshal (escapes, HTML characters, invalid UTF-8).
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always encodes
			return append(dst, raw...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
