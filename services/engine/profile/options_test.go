package profile_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

func boolPtr(b bool) *bool { return &b }

// TestEffectiveOptions: a run's options are the profile's defaults merged
// with what it asked for; asking for more than the profile allows is an
// *OptionError naming the option, never a downgrade.
func TestEffectiveOptions(t *testing.T) {
	t.Parallel()
	plain := profile.Profile{ID: "plain"}
	networked := profile.Profile{ID: "net", Sandbox: profile.Sandbox{Network: true},
		RunOptions: profile.RunOptions{ApprovalModes: []events.ApprovalMode{events.ApprovalAsk, events.ApprovalBypass}}}
	cases := []struct {
		name  string
		p     profile.Profile
		asked *events.RunOptions
		want  events.RunOptions
		bad   []string // options refused
	}{
		{"defaults", plain, nil, events.RunOptions{SafetyMode: events.SafetyWorkspaceWrite, ApprovalMode: events.ApprovalAsk,
			NetworkAccess: boolPtr(false)}, nil},
		{"networked default", networked, &events.RunOptions{}, events.RunOptions{SafetyMode: events.SafetyWorkspaceWrite,
			ApprovalMode: events.ApprovalAsk, NetworkAccess: boolPtr(true)}, nil},
		{"asked within bounds", networked, &events.RunOptions{WorkingDirectory: "src", SafetyMode: events.SafetyReadOnly,
			ApprovalMode: events.ApprovalBypass, NetworkAccess: boolPtr(false)},
			events.RunOptions{WorkingDirectory: "src", SafetyMode: events.SafetyReadOnly, ApprovalMode: events.ApprovalBypass,
				NetworkAccess: boolPtr(false)}, nil},
		{"bypass not listed", plain, &events.RunOptions{ApprovalMode: events.ApprovalBypass}, events.RunOptions{}, []string{"approvalMode"}},
		{"auto not listed", networked, &events.RunOptions{ApprovalMode: events.ApprovalAuto}, events.RunOptions{}, []string{"approvalMode"}},
		{"full access not listed", plain, &events.RunOptions{SafetyMode: events.SafetyDangerFullAccess}, events.RunOptions{},
			[]string{"safetyMode"}},
		{"network forbidden", plain, &events.RunOptions{NetworkAccess: boolPtr(true), ApprovalMode: events.ApprovalBypass},
			events.RunOptions{}, []string{"approvalMode", "networkAccess"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.p.EffectiveOptions(tc.asked)
			if len(tc.bad) == 0 {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("EffectiveOptions = %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, profile.ErrOptionNotAllowed) {
				t.Fatalf("err = %v, want ErrOptionNotAllowed", err)
			}
			for _, opt := range tc.bad {
				if !strings.Contains(err.Error(), opt) {
					t.Errorf("err %q does not name %s", err, opt)
				}
			}
			var oe *profile.OptionError
			if !errors.As(err, &oe) || oe.Agent != tc.p.ID || len(oe.Refused) != len(tc.bad) {
				t.Fatalf("err = %v, want an *OptionError of agent %s refusing %v", err, tc.p.ID, tc.bad)
			}
		})
	}
}

func TestEffectiveOptionsRefusesMalformed(t *testing.T) {
	t.Parallel()
	_, err := profile.Profile{ID: "p"}.EffectiveOptions(&events.RunOptions{WorkingDirectory: "../x"})
	if err == nil || errors.Is(err, profile.ErrOptionNotAllowed) {
		t.Fatalf("err = %v, want a malformed-option error", err)
	}
}

func TestRunOptionsValidate(t *testing.T) {
	t.Parallel()
	bad := profile.Profile{ID: "p", RunOptions: profile.RunOptions{
		SafetyModes: []events.SafetyMode{events.SafetyReadOnly}, ApprovalModes: []events.ApprovalMode{"never"},
		ApprovalMode: events.ApprovalBypass}}
	err := bad.Validate()
	for _, want := range []string{`"never"`, "runOptions.safetyMode \"workspace-write\" is not one of", "runOptions.approvalMode \"bypass\""} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
}

func TestLoadReadsRunOptions(t *testing.T) {
	t.Parallel()
	c, err := profile.Load(filepath.Join("testdata", "agents.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	coder, _ := c.Get("coder.v2")
	got, err := coder.EffectiveOptions(nil)
	if err != nil || got.SafetyMode != events.SafetyReadOnly || got.ApprovalMode != events.ApprovalAsk {
		t.Fatalf("coder.v2 defaults = %+v, %v", got, err)
	}
	full, err := coder.EffectiveOptions(&events.RunOptions{SafetyMode: events.SafetyDangerFullAccess})
	if err != nil || full.NetworkAccess == nil || !*full.NetworkAccess {
		t.Fatalf("danger-full-access = %+v, %v; want allowed, with the network on", full, err)
	}
}

// TestDangerFullAccessHasTheNetwork: as seed 002 says, danger-full-access
// always has the network on; asking it off with that mode is malformed,
// and a profile that allows the mode must allow the network.
func TestDangerFullAccessHasTheNetwork(t *testing.T) {
	t.Parallel()
	full := profile.Profile{ID: "full", Sandbox: profile.Sandbox{Network: true}, RunOptions: profile.RunOptions{
		SafetyModes: []events.SafetyMode{events.SafetyWorkspaceWrite, events.SafetyDangerFullAccess}}}
	if _, err := full.EffectiveOptions(&events.RunOptions{SafetyMode: events.SafetyDangerFullAccess, NetworkAccess: boolPtr(false)}); err == nil ||
		errors.Is(err, profile.ErrOptionNotAllowed) {
		t.Fatalf("danger-full-access without network = %v, want a malformed-option error", err)
	}
	full.Sandbox.Network = false
	if err := full.Validate(); err == nil || !strings.Contains(err.Error(), "needs sandbox.network") {
		t.Fatalf("Validate() = %v, want danger-full-access to need sandbox.network", err)
	}
}
