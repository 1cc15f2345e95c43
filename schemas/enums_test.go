package schemas_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/schemas"
)

// defsEnum returns the enum at a path below $defs in defs.json.
func defsEnum(t *testing.T, def ...string) []string {
	t.Helper()
	var out []string
	for _, v := range asSlice(dig(readJSON(t, schemas.DefsFile), append(append([]string{"$defs"}, def...), "enum")...)) {
		out = append(out, v.(string))
	}
	if len(out) == 0 {
		t.Fatalf("defs.json: %s has no enum", def)
	}
	return out
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestEnumsMatchGo checks every enum of the schemas against the Go constants.
func TestEnumsMatchGo(t *testing.T) {
	t.Parallel()
	outcomes := slices.DeleteFunc(stringsOf(events.Outcomes()), func(o string) bool { return o == string(events.OutcomeDuplicate) })
	for _, tc := range []struct {
		def  string
		want []string
	}{
		{"commandType", stringsOf(commands.Types())},
		{"errorCode", stringsOf(events.Codes())},
		{"recordedOutcome", outcomes},
		{"intent", []string{commands.IntentSteer, commands.IntentFollowUp, commands.IntentClarification, commands.IntentAuto}},
		{"resolvedIntent", []string{commands.IntentSteer, commands.IntentFollowUp, commands.IntentClarification, commands.IntentQueued}},
		{"pauseReason", stringsOf([]events.PauseReason{events.PauseAwaitingApproval, events.PauseAwaitingUserInput,
			events.PauseAwaitingExternalToolResult, events.PauseAwaitingCheckpointRestore})},
		{"failureCode", []string{events.FailModelError, events.FailBudgetExhausted, events.FailRuntimeLost,
			events.FailSandboxError, events.FailInternal, events.FailHistoryUnavailable, events.FailCapabilityUnavailable}},
		{"itemType", stringsOf([]events.ItemType{events.ItemUserMessage, events.ItemAssistantMessage, events.ItemReasoning,
			events.ItemPlan, events.ItemCommandExecution, events.ItemFileChange, events.ItemToolCall, events.ItemMCPToolCall,
			events.ItemClarificationRequest, events.ItemContextCompaction})},
		{"toolErrorCode", []string{events.ToolErrUnknownTool, events.ToolErrInvalidArguments, events.ToolErrToolError,
			events.ToolErrCancelled, events.ToolErrRuntimeLost, events.ToolErrBudgetExhausted, events.ToolErrBlockedByPolicy,
			events.ToolErrDeniedByUser, events.ToolErrExpired, events.ToolErrLimitExceeded, events.ToolErrSandboxError,
			events.ToolErrTimedOut}},
		{"grantScope", []string{events.ScopeRun, events.ScopePlatformSession}},
		{"approvalScope", []string{events.ScopeItem, events.ScopeRun, events.ScopePlatformSession}},
		{"decision", []string{events.DecisionAllow, events.DecisionDeny}},
	} {
		if got := defsEnum(t, tc.def); !sameSet(got, tc.want) {
			t.Errorf("defs.json %s enum %q, Go has %q", tc.def, got, tc.want)
		}
	}
	for _, r := range defsEnum(t, "pauseReason") {
		if !events.PauseReason(r).Valid() {
			t.Errorf("pauseReason %s is not Valid() in Go", r)
		}
	}
	env := readJSON(t, schemas.EventEnvelopeFile)
	var types []string
	for _, v := range asSlice(dig(env, "properties", "type", "enum")) {
		types = append(types, v.(string))
	}
	if !sameSet(types, stringsOf(events.Catalog())) {
		t.Errorf("event.envelope.json type enum %q, catalog %q", types, events.Catalog())
	}
}

// TestCompactionTriggersMatchGo checks the inline triggerReason enum of
// context.compacted against the Go constants.
func TestCompactionTriggersMatchGo(t *testing.T) {
	t.Parallel()
	var triggers []string
	for _, v := range asSlice(dig(readJSON(t, schemas.EventPayloadFile(string(events.ContextCompacted))), "properties", "triggerReason", "enum")) {
		triggers = append(triggers, v.(string))
	}
	if want := []string{events.CompactBeforeModelRequest, events.CompactOverflowRecovery, events.CompactPostToolResult,
		events.CompactManual}; !sameSet(triggers, want) {
		t.Errorf("context.compacted triggerReason enum %q, Go has %q", triggers, want)
	}
}

// TestEnumsAcceptedByGoValidator sets each enum value the schemas allow into a
// valid command and expects commands.Validate to accept it too.
func TestEnumsAcceptedByGoValidator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		example, field string
		def            []string
	}{
		{"command.AppendUserInput.steer.json", "payload.intent", []string{"intent"}},
		{"command.SubmitApprovalDecision.json", "payload.decision", []string{"decision"}},
		{"command.SubmitApprovalDecision.json", "payload.scope", []string{"approvalScope"}},
		{"command.CreateRun.json", "actor.type", []string{"actor", "properties", "type"}},
	} {
		for _, v := range defsEnum(t, tc.def...) {
			doc := readJSON(t, example(tc.example))
			keys := strings.Split(tc.field, ".")
			dig(doc, keys[:len(keys)-1]...).(map[string]any)[keys[len(keys)-1]] = v
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := commands.Decode(data); err != nil {
				t.Errorf("%s = %v: schema allows it, Go rejects it: %v", tc.field, v, err)
			}
			if err := validate(t, schemas.CommandEnvelopeFile, data); err != nil {
				t.Errorf("%s = %v: %v", tc.field, v, err)
			}
		}
	}
}
