package commands

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
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

// RunIDFor derives the run id of a CreateRun from its tenant, idempotency
// key and sandbox key, so a retried create lands on the same partition and
// the same run. Among partitions partitions, the id is placed on the sandbox
// key's home partition (SandboxPartition): every run of one sandbox key lives
// on one partition, whose single owner runs them one at a time.
// partitions <= 1 places nothing.
func RunIDFor(tenantID, idempotencyKey string, sk events.SandboxKey, partitions int) string {
	return routed(partitions, sk, tenantID, idempotencyKey)
}

// SandboxPartition is the partition every run of sandbox key sk lives on.
func SandboxPartition(sk events.SandboxKey, partitions int) int32 {
	if partitions <= 1 {
		return 0
	}
	return partition.For(SandboxKeyString(sk), partitions)
}

// SandboxKeyString is the canonical text of a sandbox key.
func SandboxKeyString(sk events.SandboxKey) string {
	return sk.TenantID + "\x00" + sk.WorkspaceID + "\x00" + sk.AgentID + "\x00" + sk.OwnerID
}

// Routed reports whether runID lives on sk's home partition.
func Routed(runID string, sk events.SandboxKey, partitions int) bool {
	return partitions <= 1 || partition.For(runID, partitions) == SandboxPartition(sk, partitions)
}

// routed derives a run id from parts that lands on sk's home partition: the
// first of DerivedID(parts…), DerivedID(parts…, "1"), … that does. The
// search is deterministic, so the same parts always give the same id, and
// takes about `partitions` tries.
func routed(partitions int, sk events.SandboxKey, parts ...string) string {
	id := events.DerivedID("run", parts...)
	if partitions <= 1 {
		return id
	}
	home := SandboxPartition(sk, partitions)
	for i := 1; partition.For(id, partitions) != home; i++ {
		id = events.DerivedID("run", append(parts, strconv.Itoa(i))...)
	}
	return id
}
