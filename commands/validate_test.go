package commands_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

type (
	createP   = commands.CreateRunPayload
	inputP    = commands.AppendUserInputPayload
	cancelP   = commands.CancelRunPayload
	approvalP = commands.SubmitApprovalDecisionPayload
	compactP  = commands.RequestCompactionPayload
)

type validateCase struct {
	name string
	typ  commands.Type
	edit editFn
	want []string // fields named by the problems; none means valid
}

// TestValidate starts from a valid envelope of each type and breaks one rule
// per case; each case must be refused naming exactly that field.
func TestValidate(t *testing.T) {
	t.Parallel()
	var cases []validateCase
	for _, typ := range commands.Types() {
		cases = append(cases, validateCase{name: "valid", typ: typ})
	}
	cases = append(cases, envelopeCases()...)
	cases = append(cases, createCases()...)
	cases = append(cases, otherPayloadCases()...)
	cases = append(cases, multiProblemCases()...)
	for _, tc := range cases {
		t.Run(string(tc.typ)+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			e := validEnvelope(t, tc.typ)
			if tc.edit != nil {
				tc.edit(t, &e)
			}
			p, err := e.Validate()
			checkProblems(t, err, tc.want)
			if len(tc.want) > 0 {
				return
			}
			want, _ := commands.NewPayload(tc.typ)
			if reflect.TypeOf(p) != reflect.TypeOf(want) {
				t.Fatalf("payload decoded as %T, want %T", p, want)
			}
			if tc.edit == nil && !reflect.DeepEqual(p, validPayload(tc.typ)) {
				t.Fatalf("payload %+v, want %+v", p, validPayload(tc.typ))
			}
		})
	}
}

func envelopeCases() []validateCase {
	cancel := commands.CancelRun
	key := func(k string) editFn { return envEdit(func(e *commands.Envelope) { e.IdempotencyKey = k }) }
	return []validateCase{
		{"idempotencyKey 160 chars", cancel, key(strings.Repeat("k", 160)), nil},
		{"idempotencyKey every allowed char", cancel, key("AZaz09._:-"), nil},
		{"idempotencyKey empty", cancel, key(""), []string{"idempotencyKey"}},
		{"idempotencyKey 161 chars", cancel, key(strings.Repeat("k", 161)), []string{"idempotencyKey"}},
		{"idempotencyKey space", cancel, key("retry 1"), []string{"idempotencyKey"}},
		{"idempotencyKey slash", cancel, key("retry/1"), []string{"idempotencyKey"}},
		{"idempotencyKey unicode", cancel, key("clé-1"), []string{"idempotencyKey"}},
		{"idempotencyKey newline", cancel, key("k\n"), []string{"idempotencyKey"}},
		{"commandId empty", cancel, envEdit(func(e *commands.Envelope) { e.CommandID = "" }), []string{"commandId"}},
		{"commandId wrong prefix", cancel, envEdit(func(e *commands.Envelope) { e.CommandID = events.NewID("run") }), []string{"commandId"}},
		{"commandId not a ULID", cancel, envEdit(func(e *commands.Envelope) { e.CommandID = "cmd_123" }), []string{"commandId"}},
		{"commandId UUID", cancel, envEdit(func(e *commands.Envelope) { e.CommandID = "cmd_0190b2a4-7c3e-7cc0-9a1e-1f2a3b4c5d6e" }), nil},
		{"runId empty", cancel, envEdit(func(e *commands.Envelope) { e.RunID = "" }), []string{"runId"}},
		{"runId wrong prefix", cancel, envEdit(func(e *commands.Envelope) { e.RunID = events.NewID("cmd") }), []string{"runId"}},
		{"platformSessionId absent", cancel, envEdit(func(e *commands.Envelope) { e.PlatformSessionID = "" }), nil},
		{"platformSessionId bad char", cancel, envEdit(func(e *commands.Envelope) { e.PlatformSessionID = "ps 1" }), []string{"platformSessionId"}},
		{"tenantId empty", cancel, envEdit(func(e *commands.Envelope) { e.TenantID = "" }), []string{"tenantId"}},
		{"tenantId 64 chars", cancel, envEdit(func(e *commands.Envelope) { e.TenantID = strings.Repeat("t", 64) }), nil},
		{"tenantId 65 chars", cancel, envEdit(func(e *commands.Envelope) { e.TenantID = strings.Repeat("t", 65) }), []string{"tenantId"}},
		{"tenantId colon", cancel, envEdit(func(e *commands.Envelope) { e.TenantID = "acme:eu" }), []string{"tenantId"}},
		{"actor.type empty", cancel, envEdit(func(e *commands.Envelope) { e.Actor.Type = "" }), []string{"actor.type"}},
		{"actor.type unknown", cancel, envEdit(func(e *commands.Envelope) { e.Actor.Type = "robot" }), []string{"actor.type"}},
		{"actor.type service", cancel, envEdit(func(e *commands.Envelope) { e.Actor.Type = "service" }), nil},
		{"actor.type system", cancel, envEdit(func(e *commands.Envelope) { e.Actor.Type = "system" }), nil},
		{"actor.id empty", cancel, envEdit(func(e *commands.Envelope) { e.Actor.ID = "" }), []string{"actor.id"}},
		{"issuedAt zero", cancel, envEdit(func(e *commands.Envelope) { e.IssuedAt = 0 }), []string{"issuedAt"}},
		{"issuedAt negative", cancel, envEdit(func(e *commands.Envelope) { e.IssuedAt = -1 }), []string{"issuedAt"}},
		{"schemaVersion empty", cancel, envEdit(func(e *commands.Envelope) { e.SchemaVersion = "" }), []string{"schemaVersion"}},
		{"schemaVersion v2", cancel, envEdit(func(e *commands.Envelope) { e.SchemaVersion = "v2" }), []string{"schemaVersion"}},
		{"type unknown", cancel, envEdit(func(e *commands.Envelope) { e.Type = "DeleteRun" }), []string{"type"}},
		{"type empty", cancel, envEdit(func(e *commands.Envelope) { e.Type = "" }), []string{"type"}},
		{"type wrong case", cancel, envEdit(func(e *commands.Envelope) { e.Type = "cancelRun" }), []string{"type"}},
		{"payload absent", cancel, rawPayload(""), nil},
		{"payload null", cancel, rawPayload("null"), nil},
		{"payload malformed JSON", commands.CreateRun, rawPayload(`{"agentId":`), []string{"payload"}},
		{"payload is an array", cancel, rawPayload(`[]`), []string{"payload"}},
		{"payload field of wrong JSON type", commands.AppendUserInput, rawPayload(`{"intent":"steer","content":5}`), []string{"payload"}},
	}
}

func createCases() []validateCase {
	create := commands.CreateRun
	content := func(s string) editFn { return payloadEdit(func(p *createP) { p.Input.Content = s }) }
	metadata := func(n int) editFn {
		return payloadEdit(func(p *createP) {
			p.Metadata = map[string]string{}
			for i := range n {
				p.Metadata[fmt.Sprintf("k%d", i)] = "v"
			}
		})
	}
	return []validateCase{
		{"content empty", create, content(""), []string{"payload.input.content"}},
		{"content exactly 256 KiB", create, content(strings.Repeat("a", commands.MaxContentBytes)), nil},
		{"content 256 KiB of 2-byte runes", create, content(strings.Repeat("é", commands.MaxContentBytes/2)), nil},
		{"content 256 KiB + 1", create, content(strings.Repeat("a", commands.MaxContentBytes+1)), []string{"payload.input.content"}},
		{"agentId empty", create, payloadEdit(func(p *createP) { p.AgentID = "" }), []string{"payload.agentId"}},
		{"agentId 65 chars", create, payloadEdit(func(p *createP) { p.AgentID = strings.Repeat("a", 65) }), []string{"payload.agentId"}},
		{"agentId colon", create, payloadEdit(func(p *createP) { p.AgentID = "demo:1" }), []string{"payload.agentId"}},
		{"parentRunId absent", create, payloadEdit(func(p *createP) { p.ParentRunID = "" }), nil},
		{"parentRunId malformed", create, payloadEdit(func(p *createP) { p.ParentRunID = "run_nope" }), []string{"payload.parentRunId"}},
		{"parentRunId wrong prefix", create, payloadEdit(func(p *createP) { p.ParentRunID = events.NewID("cmd") }), []string{"payload.parentRunId"}},
		{"sandboxKey.tenantId other tenant", create, payloadEdit(func(p *createP) { p.SandboxKey.TenantID = otherTenant }), []string{"payload.sandboxKey.tenantId"}},
		{"sandboxKey.workspaceId empty", create, payloadEdit(func(p *createP) { p.SandboxKey.WorkspaceID = "" }), []string{"payload.sandboxKey.workspaceId"}},
		{"sandboxKey.agentId colon", create, payloadEdit(func(p *createP) { p.SandboxKey.AgentID = "a:b" }), []string{"payload.sandboxKey.agentId"}},
		{"sandboxKey.ownerId space", create, payloadEdit(func(p *createP) { p.SandboxKey.OwnerID = "a b" }), []string{"payload.sandboxKey.ownerId"}},
		{"tenantId differs from sandboxKey", create, envEdit(func(e *commands.Envelope) { e.TenantID = otherTenant }), []string{"payload.sandboxKey.tenantId"}},
		{"tenantId invalid", create, envEdit(func(e *commands.Envelope) { e.TenantID = "a b" }), []string{"tenantId", "payload.sandboxKey.tenantId"}},
		{"metadata absent", create, payloadEdit(func(p *createP) { p.Metadata = nil }), nil},
		{"metadata 32 entries", create, metadata(32), nil},
		{"metadata 33 entries", create, metadata(33), []string{"payload.metadata"}},
		{"metadata bad key", create, payloadEdit(func(p *createP) { p.Metadata["bad key"] = "v" }), []string{"payload.metadata.bad key"}},
		{"metadata value 1024 bytes", create, payloadEdit(func(p *createP) { p.Metadata["k"] = strings.Repeat("v", 1024) }), nil},
		{"metadata value 1025 bytes", create, payloadEdit(func(p *createP) { p.Metadata["k"] = strings.Repeat("v", 1025) }), []string{"payload.metadata.k"}},
	}
}

func otherPayloadCases() []validateCase {
	input, approval := commands.AppendUserInput, commands.SubmitApprovalDecision
	long := strings.Repeat("r", 1025)
	return []validateCase{
		{"intent follow_up", input, payloadEdit(func(p *inputP) { p.Intent = commands.IntentFollowUp }), nil},
		{"intent clarification", input, payloadEdit(func(p *inputP) { p.Intent = commands.IntentClarification }), nil},
		{"intent empty", input, payloadEdit(func(p *inputP) { p.Intent = "" }), []string{"payload.intent"}},
		{"intent unknown", input, payloadEdit(func(p *inputP) { p.Intent = "interrupt" }), []string{"payload.intent"}},
		{"content empty", input, payloadEdit(func(p *inputP) { p.Content = "" }), []string{"payload.content"}},
		{"content exactly 256 KiB", input, payloadEdit(func(p *inputP) { p.Content = strings.Repeat("a", commands.MaxContentBytes) }), nil},
		{"content 256 KiB + 1", input, payloadEdit(func(p *inputP) { p.Content = strings.Repeat("a", commands.MaxContentBytes+1) }), []string{"payload.content"}},
		{"interactionId 161 bytes", input, payloadEdit(func(p *inputP) { p.InteractionID = strings.Repeat("i", 161) }), []string{"payload.interactionId"}},
		{"reason 1024 bytes", commands.CancelRun, payloadEdit(func(p *cancelP) { p.Reason = long[1:] }), nil},
		{"reason 1025 bytes", commands.CancelRun, payloadEdit(func(p *cancelP) { p.Reason = long }), []string{"payload.reason"}},
		{"reason 1025 bytes", commands.RequestCompaction, payloadEdit(func(p *compactP) { p.Reason = long }), []string{"payload.reason"}},
		{"reason absent", commands.RequestCompaction, rawPayload(`{}`), nil},
		{"reason 1025 bytes", approval, payloadEdit(func(p *approvalP) { p.Reason = long }), []string{"payload.reason"}},
		{"itemId empty", approval, payloadEdit(func(p *approvalP) { p.ItemID = "" }), []string{"payload.itemId"}},
		{"itemId wrong prefix", approval, payloadEdit(func(p *approvalP) { p.ItemID = events.NewID("run") }), []string{"payload.itemId"}},
		{"decision deny", approval, payloadEdit(func(p *approvalP) { p.Decision = "deny" }), nil},
		{"decision unknown", approval, payloadEdit(func(p *approvalP) { p.Decision = "maybe" }), []string{"payload.decision"}},
		{"decision empty", approval, payloadEdit(func(p *approvalP) { p.Decision = "" }), []string{"payload.decision"}},
		{"scope run", approval, payloadEdit(func(p *approvalP) { p.Scope = "run" }), nil},
		{"scope platform_session", approval, payloadEdit(func(p *approvalP) { p.Scope = "platform_session" }), nil},
		{"scope unknown", approval, payloadEdit(func(p *approvalP) { p.Scope = "tenant" }), []string{"payload.scope"}},
	}
}

func multiProblemCases() []validateCase {
	return []validateCase{
		{"every envelope field and the payload", commands.CancelRun, func(t *testing.T, e *commands.Envelope) {
			t.Helper()
			payloadEdit(func(p *cancelP) { p.Reason = strings.Repeat("r", 2000) })(t, e)
			*e = commands.Envelope{Type: e.Type, PlatformSessionID: "a/b", Actor: events.Actor{Type: "robot"}, Payload: e.Payload}
		}, []string{"commandId", "idempotencyKey", "runId", "platformSessionId", "tenantId", "actor.type", "actor.id",
			"issuedAt", "schemaVersion", "payload.reason"}},
		{"empty payload", commands.CreateRun, rawPayload(`{}`), []string{"payload.agentId", "payload.input.content",
			"payload.sandboxKey.tenantId", "payload.sandboxKey.workspaceId", "payload.sandboxKey.agentId", "payload.sandboxKey.ownerId"}},
		{"unknown type and bad envelope", commands.CancelRun, envEdit(func(e *commands.Envelope) {
			e.Type, e.TenantID, e.IssuedAt = "Teleport", "", 0
		}), []string{"type", "tenantId", "issuedAt"}},
		{"malformed payload and bad envelope", commands.CancelRun, envEdit(func(e *commands.Envelope) {
			e.Payload, e.RunID, e.SchemaVersion = []byte(`{"reason":}`), "run", "1"
		}), []string{"payload", "runId", "schemaVersion"}},
		{"several payload fields", commands.SubmitApprovalDecision, rawPayload(`{"decision":"yes","scope":"forever"}`),
			[]string{"payload.itemId", "payload.decision", "payload.scope"}},
		{"intent and content", commands.AppendUserInput, rawPayload(`{"intent":"shout"}`),
			[]string{"payload.intent", "payload.content"}},
	}
}

// TestValidateRejectsInvalidUTF8 sends content whose bytes are not UTF-8. The
// protocol refuses it; it must not be altered silently.
func TestValidateRejectsInvalidUTF8(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		typ     commands.Type
		payload string
		field   string
	}{
		{"CreateRun/invalid byte", commands.CreateRun, "{\"agentId\":\"demo\",\"input\":{\"content\":\"a\xffb\"}," +
			"\"sandboxKey\":{\"tenantId\":\"acme\",\"workspaceId\":\"ws\",\"agentId\":\"demo\",\"ownerId\":\"o\"}}", "payload.input.content"},
		{"AppendUserInput/truncated rune", commands.AppendUserInput, "{\"intent\":\"steer\",\"content\":\"price \xe2\x82\"}", "payload.content"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := validEnvelope(t, tc.typ)
			rawPayload(tc.payload)(t, &e)
			p, err := e.Validate()
			if err == nil {
				t.Fatalf("invalid UTF-8 accepted; payload decoded as %+v", p)
			}
			checkProblems(t, err, []string{tc.field})
		})
	}
}
