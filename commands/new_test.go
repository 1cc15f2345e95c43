package commands_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
)

func TestNewFillsTheEnvelope(t *testing.T) {
	t.Parallel()
	for _, typ := range commands.Types() {
		t.Run(string(typ), func(t *testing.T) {
			t.Parallel()
			h := commands.Header{RunID: events.NewID("run"), PlatformSessionID: "ps:1", TenantID: tenant, Actor: actor}
			before := time.Now().UnixMilli()
			a := newEnvelope(t, typ, h, validPayload(typ))
			b := newEnvelope(t, typ, h, validPayload(typ))
			after := time.Now().UnixMilli()
			if !events.ValidID("cmd", a.CommandID) || a.CommandID == b.CommandID {
				t.Errorf("commandIds %q, %q: want two distinct cmd_ ids", a.CommandID, b.CommandID)
			}
			if a.IssuedAt < before || a.IssuedAt > after {
				t.Errorf("issuedAt %d not within [%d, %d]", a.IssuedAt, before, after)
			}
			if a.SchemaVersion != events.SchemaVersion || a.Type != typ {
				t.Errorf("schemaVersion %q type %q", a.SchemaVersion, a.Type)
			}
			if a.IdempotencyKey != "auto-"+a.CommandID || !commands.ValidIdempotencyKey(a.IdempotencyKey) {
				t.Errorf("automatic idempotency key %q for command %s", a.IdempotencyKey, a.CommandID)
			}
			if a.RunID != h.RunID || a.TenantID != tenant || a.Actor != actor || a.PlatformSessionID != "ps:1" {
				t.Errorf("header not copied: %+v", a)
			}
			if _, err := a.Validate(); err != nil {
				t.Errorf("New built an invalid envelope: %v", err)
			}
			h.IdempotencyKey = "mine-1"
			if c := newEnvelope(t, typ, h, validPayload(typ)); c.IdempotencyKey != "mine-1" {
				t.Errorf("idempotency key %q, want the caller's", c.IdempotencyKey)
			}
		})
	}
}

func TestNewRefusesAnUnencodablePayload(t *testing.T) {
	t.Parallel()
	if _, err := commands.New(commands.CancelRun, commands.Header{}, make(chan int)); err == nil {
		t.Fatal("New encoded a channel")
	}
}

func TestRunIDFor(t *testing.T) {
	t.Parallel()
	id := commands.RunIDFor(tenant, "create-1", events.SandboxKey{}, 1)
	if !events.ValidID("run", id) {
		t.Fatalf("RunIDFor = %q, not a valid run id", id)
	}
	cases := []struct {
		name        string
		tenant, key string
		same        bool
	}{
		{"same tenant and key", tenant, "create-1", true},
		{"other tenant", otherTenant, "create-1", false},
		{"other key", tenant, "create-2", false},
		{"parts shifted", tenant + "c", "reate-1", false},
		{"parts swapped", "create-1", tenant, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := commands.RunIDFor(tc.tenant, tc.key, events.SandboxKey{}, 1); (got == id) != tc.same {
				t.Fatalf("RunIDFor(%q, %q) = %s; RunIDFor(%q, create-1) = %s; want same=%v", tc.tenant, tc.key, got, tenant, id, tc.same)
			}
		})
	}
}

// TestRunIDForPlacesRunsOnTheirSandboxKeysPartition: every run of one
// sandbox key lands on the key's partition, whatever its idempotency key,
// and the id is still a pure function of its inputs.
func TestRunIDForPlacesRunsOnTheirSandboxKeysPartition(t *testing.T) {
	t.Parallel()
	const partitions = 12
	keys := []events.SandboxKey{
		{TenantID: tenant, WorkspaceID: "default", AgentID: "demo", OwnerID: "alice"},
		{TenantID: tenant, WorkspaceID: "default", AgentID: "demo", OwnerID: "bob"},
		{TenantID: otherTenant, WorkspaceID: "ws", AgentID: "coder", OwnerID: "group:7"},
	}
	homes := map[int32]bool{}
	for _, sk := range keys {
		home := commands.SandboxPartition(sk, partitions)
		homes[home] = true
		for i := range 50 {
			key := fmt.Sprintf("create-%d", i)
			id := commands.RunIDFor(sk.TenantID, key, sk, partitions)
			if got := partition.For(id, partitions); got != home {
				t.Fatalf("RunIDFor(%s, %v) = %s on partition %d, want the key's partition %d", key, sk, id, got, home)
			}
			if !commands.Routed(id, sk, partitions) {
				t.Fatalf("Routed(%s) = false", id)
			}
			if again := commands.RunIDFor(sk.TenantID, key, sk, partitions); again != id {
				t.Fatalf("RunIDFor is not deterministic: %s then %s", id, again)
			}
		}
	}
	if len(homes) < 2 {
		t.Fatalf("three sandbox keys all map to partition(s) %v; expected them spread", homes)
	}
	// An id placed for one key is (almost always) misrouted for another.
	id := commands.RunIDFor(tenant, "x", keys[0], partitions)
	if commands.SandboxPartition(keys[0], partitions) != commands.SandboxPartition(keys[2], partitions) && commands.Routed(id, keys[2], partitions) {
		t.Fatalf("Routed(%s, other key) = true", id)
	}
}

// TestSandboxPartitionAgreesWithTheKafkaPartitioner: the placement computed
// here is where the producer's partitioner really puts the records.
func TestSandboxPartitionAgreesWithTheKafkaPartitioner(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 12, 64} {
		for i := range 2000 {
			key := strings.Repeat("k", i%7) + fmt.Sprint(i) // every length mod 4
			id := events.DerivedID("run", key)
			sk := events.SandboxKey{TenantID: "t", WorkspaceID: key, AgentID: "a", OwnerID: "o"}
			if got, want := commands.Routed(id, sk, n), partition.For(id, n) == partition.For(commands.SandboxKeyString(sk), n); got != want {
				t.Fatalf("n=%d key %q: Routed = %v, the Kafka partitioner says %v", n, key, got, want)
			}
			if got, want := commands.SandboxPartition(sk, n), partition.For(commands.SandboxKeyString(sk), n); got != want {
				t.Fatalf("n=%d key %q: SandboxPartition = %d, the Kafka partitioner says %d", n, key, got, want)
			}
		}
	}
}

func TestValidIdempotencyKey(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"a": true, strings.Repeat("k", 160): true, "Az09._:-": true, "auto-" + events.NewID("cmd"): true,
		"": false, strings.Repeat("k", 161): false, "a b": false, "a/b": false, "é": false, "a\x00": false,
	}
	for key, want := range cases {
		if got := commands.ValidIdempotencyKey(key); got != want {
			t.Errorf("ValidIdempotencyKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, typ := range commands.Types() {
		t.Run(string(typ), func(t *testing.T) {
			t.Parallel()
			want := validEnvelope(t, typ)
			data, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			got, p, err := commands.Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Decode = %+v, want %+v", got, want)
			}
			if !reflect.DeepEqual(p, validPayload(typ)) {
				t.Errorf("payload %+v, want %+v", p, validPayload(typ))
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	invalid := validEnvelope(t, commands.CancelRun)
	invalid.IssuedAt = 0
	data, err := json.Marshal(invalid)
	if err != nil {
		t.Fatal(err)
	}
	c, p, err := commands.Decode(data)
	checkProblems(t, err, []string{"issuedAt"})
	// The executor records the rejection on the named run: the ids survive.
	if p != nil || c.RunID != invalid.RunID || c.CommandID != invalid.CommandID {
		t.Errorf("on a validation error Decode returned %+v, %v", c, p)
	}
	for _, garbage := range []string{"", "nope", "[]", `{"issuedAt":"now"}`, `{"commandId":`} {
		c, p, err := commands.Decode([]byte(garbage))
		var ve *commands.ValidationError
		if err == nil || errors.As(err, &ve) || p != nil || !reflect.DeepEqual(c, commands.Envelope{}) {
			t.Errorf("Decode(%q) = %+v, %v, %v; want a decoding error and nothing else", garbage, c, p, err)
		}
	}
}

func TestTypesHavePayloads(t *testing.T) {
	t.Parallel()
	for _, typ := range commands.Types() {
		if p, err := commands.NewPayload(typ); err != nil || p == nil {
			t.Errorf("NewPayload(%s) = %v, %v", typ, p, err)
		}
	}
	if _, err := commands.NewPayload("Teleport"); err == nil {
		t.Error("NewPayload accepted an unknown type")
	}
}

func TestCodesAndOutcomesAreDistinct(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, c := range events.Codes() {
		if c == "" || seen[string(c)] {
			t.Errorf("code %q empty or listed twice", c)
		}
		seen[string(c)] = true
	}
	clear(seen)
	for _, o := range events.Outcomes() {
		if o == "" || seen[string(o)] {
			t.Errorf("outcome %q empty or listed twice", o)
		}
		seen[string(o)] = true
	}
}
