package im_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/im"
)

// TestActionsCarryTheirCommand checks every button of the golden cases: its
// payload parses back to its approval, which names the message's run and
// item, and its id is a valid idempotency key, unique among the buttons.
func TestActionsCarryTheirCommand(t *testing.T) {
	t.Parallel()
	ids := map[string]bool{}
	n := 0
	for name, build := range cases {
		for _, m := range flattenAll(t, build(t)) {
			for _, a := range m.Actions {
				n++
				got, ok := im.ParsePayload(a.Payload)
				// A short payload names the approval; its run and item are the request's.
				if ok && got.ApprovalID != "" && m.Request != nil && got.ApprovalID == m.Request.ApprovalID {
					got.ApprovalID, got.RunID, got.ItemID = "", m.RunID, m.ItemID
				}
				switch {
				case a.Approval == nil || !ok || got != *a.Approval || len(a.Payload) > im.MaxPayloadBytes:
					t.Errorf("%s: action %s payload %q parses to %+v (ok=%v), want %+v within %d bytes", name, a.ID, a.Payload, got, ok, a.Approval, im.MaxPayloadBytes)
				case got.RunID != m.RunID || got.ItemID != m.ItemID || (got.Decision == "deny" && got.Scope != "item"):
					t.Errorf("%s: action %s decides %+v on message of run %s item %s", name, a.ID, got, m.RunID, m.ItemID)
				case !commands.ValidIdempotencyKey(a.ID) || ids[a.ID]:
					t.Errorf("%s: action id %s is not a fresh valid idempotency key", name, a.ID)
				}
				ids[a.ID] = true
			}
		}
	}
	if n == 0 {
		t.Fatal("no golden case has actions")
	}
}

func TestParsePayloadRefusesOtherText(t *testing.T) {
	t.Parallel()
	run, item := id("run", 1, "R"), itm(1)
	for _, s := range []string{
		"", "yes", "approval", "allow",
		"approval:" + run + ":" + item + ":allow",
		"approval:" + run + ":" + item + ":allow:item:extra",
		"approval:" + run + ":" + item + ":maybe:item",
		"approval:" + run + ":" + item + ":allow:forever",
		"approval:run_x:" + item + ":allow:item",
		"approval:" + run + ":itm_y:deny:item",
		"approve:" + run + ":" + item + ":allow:item",
	} {
		if a, ok := im.ParsePayload(s); ok {
			t.Errorf("ParsePayload(%q) = %+v, want false", s, a)
		}
	}
	want := im.Approval{RunID: run, ItemID: item, Decision: "deny", Scope: "platform_session"}
	if got, ok := im.ParsePayload(im.ActionPayload(want)); !ok || got != want {
		t.Errorf("round trip of %+v gave %+v, %v", want, got, ok)
	}
	apr := id("apr", 1, "A")
	short := im.ShortPayload(apr, "allow", "platform_session")
	if got, ok := im.ParsePayload(short); !ok || got != (im.Approval{ApprovalID: apr, Decision: "allow", Scope: "platform_session"}) || len(short) > im.MaxPayloadBytes {
		t.Errorf("short payload %q (%d bytes) gave %+v, %v", short, len(short), got, ok)
	}
	for _, s := range []string{"apr:" + apr + ":allow", "apr:apr_x:allow:item", "apr:" + run + ":allow:item", "apr:" + apr + ":allow:forever"} {
		if a, ok := im.ParsePayload(s); ok {
			t.Errorf("ParsePayload(%q) = %+v, want false", s, a)
		}
	}
}

func TestDecisionText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ decision, scope, reason, grant, want string }{
		{"allow", "item", "", "", "Allowed by u."},
		{"allow", "run", "", "", "Allowed for this run by u."},
		{"allow", "platform_session", "fine here", "", "Allowed for this conversation by u: fine here"},
		{"allow", "run", "covered by the grant given for item x", id("grt", 1, "G"), "Allowed for this run by u's grant for the same tool and rule."},
		{"deny", "item", "", "", "Denied by u."},
		{"deny", "run", "too risky", "", "Denied by u: too risky"},
	} {
		d := events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: itm(1), Payload: events.ApprovalDecisionPayload{
			Decision: tc.decision, Scope: tc.scope, Reason: tc.reason, Actor: events.Actor{Type: "user", ID: "u"}, GrantID: tc.grant}}
		e, err := d.Seal(events.Identity{RunID: run1, TenantID: "acme"}, 9, id("evt", 9, "E"), t0)
		if err != nil {
			t.Fatal(err)
		}
		m, ok, err := im.Flatten(e)
		if err != nil || !ok || m.Text != tc.want {
			t.Errorf("%s/%s: text %q (ok=%v err=%v), want %q", tc.decision, tc.scope, m.Text, ok, err, tc.want)
		}
		checkValid(t, m)
	}
}
