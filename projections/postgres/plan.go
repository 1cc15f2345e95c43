package postgres

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
)

// decoded is one record with its envelope.
type decoded struct {
	rec Record
	env events.Envelope
}

// batchPlan is everything one batch writes, computed in Go from the decoded
// records and the last applied seq of their runs, so that the writes go to
// the server as one COPY and one pipeline of set-based statements.
type batchPlan struct {
	events      []decoded              // new events, in log order
	lastSeq     map[string]int64       // run → last applied seq, advanced as events are planned
	advanced    []string               // runs whose last seq advanced, in first-seen order
	runs        map[string]*runChange  // run → change to its runs row (keys = advanced)
	commands    map[string]*commandRow // command → its row after the batch
	cmdOrder    []string               // keys of commands in first-seen order
	notify      []string               // command ids whose outcome was recorded
	notified    map[string]struct{}    // set of notify
	checkpoints map[int32]int64        // partition → next offset

	items         map[itemKey]*itemChange     // item → change to its items row
	itemOrder     []itemKey                   // keys of items in first-seen order
	approvals     map[itemKey]*approvalChange // item → change to its approvals row
	approvalOrder []itemKey                   // keys of approvals in first-seen order
	grants        []grantRow                  // new permission_grants rows
	revocations   []grantRevocation           // grants their granting run revoked
	asks          []approvalAsk               // requests that ask again after a grant lapsed
	closures      []runClosure                // runs that ended: their pending approvals close

	cur shared // payloads of the event being planned

	// upsert: the rows the batch inserts into runs and items may exist
	// already (writeDecoded's second attempt).
	upsert bool
}

// shared holds the payloads of the event being planned that more than one
// read model reads, each decoded once: a completed item's (runs and items),
// a failed item's (items and approvals).
type shared struct {
	completed *events.ItemCompletedPayload
	failed    *events.ItemFailedPayload
}

// itemCompleted returns e's runtime.item.completed payload, decoded once.
func (p *batchPlan) itemCompleted(e events.Envelope) (*events.ItemCompletedPayload, error) {
	return decodeOnce(&p.cur.completed, e)
}

// itemFailed returns e's runtime.item.failed payload, decoded once.
func (p *batchPlan) itemFailed(e events.Envelope) (*events.ItemFailedPayload, error) {
	return decodeOnce(&p.cur.failed, e)
}

// decodeOnce returns *slot, decoding e's payload into it first if empty.
func decodeOnce[T any](slot **T, e events.Envelope) (*T, error) {
	if *slot == nil {
		v, err := payloadOf[T](e)
		if err != nil {
			return nil, err
		}
		*slot = v
	}
	return *slot, nil
}

// payloadOf decodes e's payload as events.Envelope.DecodePayload does (the
// commonest types without reflection), into e's registered payload type,
// which is T, reporting a *events.PayloadError.
func payloadOf[T any](e events.Envelope) (*T, error) {
	p, err := e.DecodePayload()
	if err != nil {
		return nil, err
	}
	v, ok := p.(*T)
	if !ok {
		return nil, &events.PayloadError{Type: e.Type, Seq: e.Seq, Err: fmt.Errorf("payload decoded as %T, want %T", p, v)}
	}
	return v, nil
}

// decodeAll decodes every record.
func decodeAll(recs []Record) ([]decoded, error) {
	out := make([]decoded, len(recs))
	for i, r := range recs {
		env, err := events.Decode(r.Value)
		if err != nil {
			return nil, &RecordError{Partition: r.Partition, Offset: r.Offset, Err: err}
		}
		if out[i], err = decodedOf(r, env); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodedOf pairs r with env, its decoded envelope, once r is known to be
// text the json column takes.
func decodedOf(r Record, env events.Envelope) (decoded, error) {
	if !utf8.Valid(r.Value) {
		// json.Unmarshal tolerates invalid UTF-8; the json column does not.
		return decoded{}, &RecordError{Partition: r.Partition, Offset: r.Offset,
			Err: errors.New("event envelope is not valid UTF-8")}
	}
	return decoded{rec: r, env: cleanIdentity(env)}, nil
}

// runsOf lists the runs of batch in first-seen order.
func runsOf(batch []decoded) []string {
	seen := make(map[string]struct{})
	var runs []string
	for _, d := range batch {
		if run := d.env.RunID; !hasKey(seen, run) {
			seen[run] = struct{}{}
			runs = append(runs, run)
		}
	}
	return runs
}

func hasKey(m map[string]struct{}, k string) bool {
	_, ok := m[k]
	return ok
}

// selectNew checks seq continuity and plans the batch's new events, the
// runs they advance and the checkpoints, without the read models
// (planModels). lastSeq holds the last applied seq of the batch's runs
// (absent = none yet); selectNew takes ownership of it.
func selectNew(batch []decoded, lastSeq map[string]int64) (*batchPlan, error) {
	p := &batchPlan{
		lastSeq:     lastSeq,
		runs:        make(map[string]*runChange),
		commands:    make(map[string]*commandRow),
		notified:    make(map[string]struct{}),
		checkpoints: make(map[int32]int64),
		items:       make(map[itemKey]*itemChange),
		approvals:   make(map[itemKey]*approvalChange),
	}
	for _, d := range batch {
		if next := d.rec.Offset + 1; next > p.checkpoints[d.rec.Partition] {
			p.checkpoints[d.rec.Partition] = next
		}
		e := d.env
		last := p.lastSeq[e.RunID]
		if e.Seq <= last {
			continue // applied before: a replay changes nothing
		}
		if e.Seq != last+1 {
			return nil, &RecordError{Partition: d.rec.Partition, Offset: d.rec.Offset,
				Err: &events.SeqGapError{RunID: e.RunID, Expected: last + 1, Actual: e.Seq}}
		}
		if _, ok := p.runs[e.RunID]; !ok {
			p.runs[e.RunID] = &runChange{runID: e.RunID}
			p.advanced = append(p.advanced, e.RunID)
		}
		p.lastSeq[e.RunID] = e.Seq
		p.events = append(p.events, d)
	}
	return p, nil
}

// planModels plans the effect of the new events on every read model. It
// reads p.events and lastSeq and writes only the models' changes, so it may
// run while the events are copied.
func (p *batchPlan) planModels() error {
	for _, d := range p.events {
		if err := p.add(d); err != nil {
			return &RecordError{Partition: d.rec.Partition, Offset: d.rec.Offset, Err: err}
		}
	}
	return nil
}

// add plans one new event.
func (p *batchPlan) add(d decoded) error {
	e := d.env
	p.cur = shared{}
	accepted, err := p.applyRun(d)
	if err != nil {
		return err
	}
	if err := p.applyCommand(e, accepted); err != nil {
		return err
	}
	if err := p.applyItem(e); err != nil {
		return err
	}
	return p.applyApproval(e)
}

// decodePayload unmarshals e's payload into v, reporting a *events.PayloadError.
func decodePayload(e events.Envelope, v any) error {
	if len(e.Payload) == 0 || string(e.Payload) == "null" {
		return nil
	}
	if err := events.Unmarshal(e.Payload, v); err != nil {
		return &events.PayloadError{Type: e.Type, Seq: e.Seq, Err: err}
	}
	return nil
}

// mustJSON encodes a value that always encodes (plain structs and maps).
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("projections/postgres: encode %T: %v", v, err)) // impossible for these types
	}
	return b
}
