package commands

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// Header is the part of an envelope a caller chooses.
type Header struct {
	RunID             string
	PlatformSessionID string
	TenantID          string
	Actor             events.Actor
	// IdempotencyKey; empty derives one from the new command id.
	IdempotencyKey string
}

// New builds an envelope with a fresh command id and the current time. It
// does not validate; call Validate before sending.
func New(t Type, h Header, payload any) (Envelope, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return Envelope{}, fmt.Errorf("encode %s payload: %w", t, err)
	}
	id := events.NewID("cmd")
	key := h.IdempotencyKey
	if key == "" {
		key = "auto-" + id
	}
	return Envelope{
		CommandID: id, IdempotencyKey: key, RunID: h.RunID, PlatformSessionID: h.PlatformSessionID,
		Type: t, Actor: h.Actor, TenantID: h.TenantID, IssuedAt: time.Now().UnixMilli(),
		SchemaVersion: events.SchemaVersion, Payload: raw,
	}, nil
}

// RunIDFor derives the run id of a CreateRun from its tenant and idempotency
// key, so a retried create lands on the same partition and the same run.
func RunIDFor(tenantID, idempotencyKey string) string {
	return events.DerivedID("run", tenantID, idempotencyKey)
}
