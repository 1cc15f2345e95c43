package events

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeEnvelope decodes data as Unmarshal would into an Envelope, for the
// envelopes writers make (AppendJSON, json.Marshal): one object whose names
// are the fields' own, whose strings need no escapes and whose numbers are
// plain integers. Every reader of the log decodes every event's envelope:
// this takes about 0.6 µs an event where Unmarshal takes 1.6 µs, with half
// the allocations (BenchmarkDecode).
//
// It reports false, having decoded nothing, for any input it is not sure to
// decode exactly as Unmarshal does: a string with an escape or invalid
// UTF-8, a null or a number in any form but a plain integer where a field
// takes a value, a name that matches a field only without regard to case,
// nesting deeper than maxFastDepth, anything that is not valid JSON. The
// caller then decodes with Unmarshal, which decides, and words its error.
// Unknown names are skipped, as Unmarshal skips them, once their values are
// checked to be valid JSON.
func decodeEnvelope(data []byte) (Envelope, bool) {
	var d envelopeDecoder
	s := scanner{data: data}
	if !s.object(envelopeNames, func(name []byte) (bool, bool) { return d.field(&s, name) }) {
		return Envelope{}, false
	}
	return d.envelope(), true
}

// envelopeDecoder is an envelope being decoded: its string fields are
// kept as slices of the input until the end, when they become one string
// (one allocation instead of one a field).
type envelopeDecoder struct {
	e   Envelope
	raw [stringFields][]byte
}

// The string fields, by their index in envelopeDecoder.raw.
const (
	fieldEventID = iota
	fieldRunID
	fieldSchemaVersion
	fieldType
	fieldPlatformSessionID
	fieldTenantID
	fieldItemID
	fieldCommandID
	stringFields
)

// envelope returns the decoded envelope, its string fields set.
func (d *envelopeDecoder) envelope() Envelope {
	n := 0
	for _, r := range d.raw {
		n += len(r)
	}
	var b strings.Builder
	b.Grow(n)
	for _, r := range d.raw {
		b.Write(r)
	}
	all, at := b.String(), 0
	var out [stringFields]string
	for i, r := range d.raw {
		out[i] = all[at : at+len(r)]
		at += len(r)
	}
	e := d.e
	e.EventID, e.RunID, e.SchemaVersion, e.Type = out[fieldEventID], out[fieldRunID], out[fieldSchemaVersion],
		Type(out[fieldType])
	e.PlatformSessionID, e.TenantID = out[fieldPlatformSessionID], out[fieldTenantID]
	e.ItemID, e.CommandID = out[fieldItemID], out[fieldCommandID]
	return e
}

// maxFastDepth bounds the nesting decodeEnvelope checks itself; a deeper
// value is left to Unmarshal (whose bound is 10,000).
const maxFastDepth = 64

// envelopeNames are the JSON names of Envelope's fields.
var envelopeNames = []string{"eventId", "runId", "seq", "schemaVersion", "type", "occurredAt", "emittedAt",
	"platformSessionId", "tenantId", "itemId", "commandId", "payload"}

// scanner reads JSON from data at i; every method that fails leaves the
// decode to Unmarshal, so none says why.
type scanner struct {
	data []byte
	i    int
}

// field decodes the value of name, read by s, into the envelope's field of
// that name; took is false when name is no field's.
func (d *envelopeDecoder) field(s *scanner, name []byte) (took, ok bool) {
	var str int
	switch string(name) { // no allocation: the compiler compares in place
	case "eventId":
		str = fieldEventID
	case "runId":
		str = fieldRunID
	case "schemaVersion":
		str = fieldSchemaVersion
	case "type":
		str = fieldType
	case "platformSessionId":
		str = fieldPlatformSessionID
	case "tenantId":
		str = fieldTenantID
	case "itemId":
		str = fieldItemID
	case "commandId":
		str = fieldCommandID
	case "seq":
		return true, s.integer(&d.e.Seq)
	case "occurredAt":
		return true, s.integer(&d.e.OccurredAt)
	case "emittedAt":
		return true, s.integer(&d.e.EmittedAt)
	case "payload":
		return true, s.raw(&d.e.Payload)
	default:
		return false, false
	}
	d.raw[str], ok = s.plainString()
	return true, ok
}

// object reads one JSON object, and nothing but white space after it,
// handing each member's name to member, which reads the value; took false
// says member does not know the name. The value of such a name is checked
// and skipped, as Unmarshal skips an unknown field, unless the name may
// match one of names without regard to case, which Unmarshal would take
// for that field.
func (s *scanner) object(names []string, member func(name []byte) (took, ok bool)) bool {
	s.space()
	if !s.consume('{') {
		return false
	}
	s.space()
	if s.consume('}') {
		return s.end()
	}
	for {
		name, ok := s.plainString()
		if !ok {
			return false
		}
		s.space()
		if !s.consume(':') {
			return false
		}
		s.space()
		took, ok := member(name)
		if !took {
			ok = !foldsToAny(name, names) && s.value(0)
		}
		if !ok {
			return false
		}
		s.space()
		if !s.consume(',') {
			return s.consume('}') && s.end()
		}
		s.space()
	}
}

// foldsToAny reports whether name may match one of names without regard
// to case (equalFoldASCII).
func foldsToAny(name []byte, names []string) bool {
	for _, n := range names {
		if equalFoldASCII(name, n) {
			return true
		}
	}
	return false
}

// raw reads one JSON value into dst, a copy of its bytes as they stand, as
// Unmarshal fills a json.RawMessage.
func (s *scanner) raw(dst *json.RawMessage) bool {
	from := s.i
	if !s.value(0) {
		return false
	}
	*dst = append(json.RawMessage(nil), s.data[from:s.i]...)
	return true
}

// end reports whether nothing but white space follows.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.data)
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) consume(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainString reads a string without escapes and of valid UTF-8, returning
// its contents (a slice of data).
func (s *scanner) plainString() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	from, ascii := s.i, true
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			v := s.data[from:s.i]
			s.i++
			return v, ascii || utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// integer reads a plain integer of at most 18 digits (no fraction, no
// exponent, no leading zero), which never overflows an int64, into dst.
func (s *scanner) integer(dst *int64) bool {
	neg := s.consume('-')
	from := s.i
	var v int64
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		v = v*10 + int64(s.data[s.i]-'0')
		s.i++
	}
	n := s.i - from
	if n == 0 || n > 18 || (n > 1 && s.data[from] == '0') {
		return false
	}
	if s.i < len(s.data) {
		switch s.data[s.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	if neg {
		v = -v
	}
	*dst = v
	return true
}

// value checks and skips one JSON value at depth. Strings are held to
// valid UTF-8, which Unmarshal does not require: such a value is left to
// it, as everything this does not accept is.
func (s *scanner) value(depth int) bool {
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.container(depth, '}', true)
	case c == '[':
		return s.container(depth, ']', false)
	case c == '"':
		return s.string()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

// container checks and skips an object (members) or an array.
func (s *scanner) container(depth int, closer byte, members bool) bool {
	if depth >= maxFastDepth {
		return false
	}
	s.i++
	s.space()
	if s.consume(closer) {
		return true
	}
	for {
		if members {
			if !s.string() {
				return false
			}
			s.space()
			if !s.consume(':') {
				return false
			}
			s.space()
		}
		if !s.value(depth + 1) {
			return false
		}
		s.space()
		if s.consume(closer) {
			return true
		}
		if !s.consume(',') {
			return false
		}
		s.space()
	}
}

// string checks and skips a string, escapes included.
func (s *scanner) string() bool {
	if !s.consume('"') {
		return false
	}
	from, ascii := s.i, true
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			ok := ascii || utf8.Valid(s.data[from:s.i])
			s.i++
			return ok
		case c == '\\':
			if !s.escape() {
				return false
			}
			continue
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return false
}

// escape checks and skips one escape sequence at s.i (a backslash).
func (s *scanner) escape() bool {
	if s.i+1 >= len(s.data) {
		return false
	}
	switch s.data[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		if _, ok := s.hex4(s.i + 2); !ok {
			return false
		}
		s.i += 6
		return true
	}
	return false
}

func (s *scanner) literal(lit string) bool {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number checks and skips a number as JSON writes it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	s.consume('-')
	switch {
	case s.consume('0'):
	case s.i < len(s.data) && s.data[s.i] >= '1' && s.data[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.consume('.') && !s.digits() {
		return false
	}
	if s.consume('e') || s.consume('E') {
		if !s.consume('+') {
			s.consume('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits, reporting whether there was one.
func (s *scanner) digits() bool {
	from := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > from
}

// equalFoldASCII reports whether name may match the ASCII word n when
// Unmarshal matches names without regard to case. It errs towards a match,
// which only leaves the decode to Unmarshal: dashes and underscores in name
// are passed over, and a name with a non-ASCII byte matches every n (the
// Kelvin sign folds to k, the long s to s).
func equalFoldASCII(name []byte, n string) bool {
	j := 0
	for _, c := range name {
		switch {
		case c >= utf8.RuneSelf:
			return true
		case c == '-' || c == '_':
			continue
		case j == len(n) || c|0x20 != n[j]|0x20:
			return false
		}
		j++
	}
	return j == len(n)
}

// fastPayloads decode, without reflection and on the terms of
// decodeEnvelope (false, having decoded nothing, for anything they are not
// sure of), the payloads of the events a streaming run writes most: its
// deltas and the start and end of each item. Every reader of the log
// decodes them (the executor's fold, the views, the browser streams).
var fastPayloads = map[Type]func(data []byte) (any, bool){
	ItemDelta:     decodeDelta,
	ItemStarted:   decodeItemStarted,
	ItemCompleted: decodeItemCompleted,
}

var deltaNames = []string{"delta", "truncated", "omittedBytes"}

// decodeDelta decodes a runtime.item.delta payload into an
// *ItemDeltaPayload.
func decodeDelta(data []byte) (any, bool) {
	p := new(ItemDeltaPayload)
	s := scanner{data: data}
	ok := s.object(deltaNames, func(name []byte) (took, ok bool) {
		switch string(name) {
		case "delta":
			p.Delta, ok = s.text()
		case "truncated":
			p.Truncated, ok = s.boolean()
		case "omittedBytes":
			ok = s.integer(&p.OmittedBytes)
		default:
			return false, false
		}
		return true, ok
	})
	if !ok {
		return nil, false
	}
	return p, true
}

var itemNames = []string{"itemType", "status", "content", "data"}

// decodeItemStarted decodes a runtime.item.started payload into an
// *ItemStartedPayload.
func decodeItemStarted(data []byte) (any, bool) {
	p := new(ItemStartedPayload)
	s := scanner{data: data}
	ok := s.object(itemNames, func(name []byte) (took, ok bool) {
		return s.itemField(name, &p.ItemType, nil, &p.Content, &p.Data)
	})
	if !ok {
		return nil, false
	}
	return p, true
}

// decodeItemCompleted decodes a runtime.item.completed payload into an
// *ItemCompletedPayload.
func decodeItemCompleted(data []byte) (any, bool) {
	p := new(ItemCompletedPayload)
	s := scanner{data: data}
	ok := s.object(itemNames, func(name []byte) (took, ok bool) {
		return s.itemField(name, &p.ItemType, &p.Status, &p.Content, &p.Data)
	})
	if !ok {
		return nil, false
	}
	return p, true
}

// itemTypes and itemStatuses are the values known shares.
var (
	itemTypes = []string{string(ItemUserMessage), string(ItemAssistantMessage), string(ItemReasoning), string(ItemPlan),
		string(ItemCommandExecution), string(ItemFileChange), string(ItemToolCall), string(ItemMCPToolCall),
		string(ItemClarificationRequest), string(ItemContextCompaction)}
	itemStatuses = []string{ItemStatusCompleted, ItemStatusTruncated}
)

// known returns v as a string, sharing the one of values it equals instead
// of allocating (the names of item types and statuses: every item has them).
func known(v []byte, values []string) string {
	for _, k := range values {
		if string(v) == k {
			return k
		}
	}
	return string(v)
}

// itemField reads the value of name, a field of an item's start or end,
// into its destination (status nil: no such field).
func (s *scanner) itemField(name []byte, itemType *ItemType, status, content *string, data *json.RawMessage) (took, ok bool) {
	var v []byte
	switch string(name) {
	case "itemType":
		v, ok = s.plainString()
		*itemType = ItemType(known(v, itemTypes))
	case "status":
		if status == nil {
			return false, false
		}
		v, ok = s.plainString()
		*status = known(v, itemStatuses)
	case "content":
		*content, ok = s.text()
	case "data":
		ok = s.raw(data)
	default:
		return false, false
	}
	return true, ok
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, bool) {
	if s.literal("true") {
		return true, true
	}
	return false, s.literal("false")
}

// text reads a string with its escapes decoded as Unmarshal decodes them.
// It fails on invalid UTF-8 and on an escaped surrogate that is not half of
// a pair, which Unmarshal replaces.
func (s *scanner) text() (string, bool) {
	if !s.consume('"') {
		return "", false
	}
	from := s.i
	for s.i < len(s.data) && s.data[s.i] != '"' && s.data[s.i] != '\\' && s.data[s.i] >= 0x20 {
		s.i++
	}
	if s.i < len(s.data) && s.data[s.i] == '"' { // no escape: the common case
		v := s.data[from:s.i]
		s.i++
		return string(v), utf8.Valid(v)
	}
	buf := append(make([]byte, 0, len(s.data)-from), s.data[from:s.i]...)
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == '"':
			s.i++
			return string(buf), utf8.Valid(buf)
		case c == '\\':
			var ok bool
			if buf, ok = s.unescape(buf); !ok {
				return "", false
			}
		case c < 0x20:
			return "", false
		default:
			buf = append(buf, c)
			s.i++
		}
	}
	return "", false
}

// unescape appends what the escape sequence at s.i (a backslash) stands for.
func (s *scanner) unescape(buf []byte) ([]byte, bool) {
	if s.i+1 >= len(s.data) {
		return nil, false
	}
	if c := s.data[s.i+1]; c != 'u' {
		var b byte
		switch c {
		case '"', '\\', '/':
			b = c
		case 'b':
			b = '\b'
		case 'f':
			b = '\f'
		case 'n':
			b = '\n'
		case 'r':
			b = '\r'
		case 't':
			b = '\t'
		default:
			return nil, false
		}
		s.i += 2
		return append(buf, b), true
	}
	r, ok := s.hex4(s.i + 2)
	if !ok {
		return nil, false
	}
	s.i += 6
	if utf16.IsSurrogate(r) { // only a high half followed by an escaped low half makes a rune
		if s.i+1 >= len(s.data) || s.data[s.i] != '\\' || s.data[s.i+1] != 'u' {
			return nil, false
		}
		lo, ok := s.hex4(s.i + 2)
		if r = utf16.DecodeRune(r, lo); !ok || r == utf8.RuneError {
			return nil, false
		}
		s.i += 6
	}
	return utf8.AppendRune(buf, r), true
}

// hex4 reads the four hex digits at i.
func (s *scanner) hex4(i int) (rune, bool) {
	if i+4 > len(s.data) {
		return 0, false
	}
	var r rune
	for _, h := range s.data[i : i+4] {
		var v byte
		switch {
		case h >= '0' && h <= '9':
			v = h - '0'
		case h >= 'a' && h <= 'f':
			v = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			v = h - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
