package commands_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// TestValidateRunOptions: a CreateRun's options are checked for their shape
// by commands.Validate too, so a forged or old command cannot carry a
// working directory outside the workspace or a mode that does not exist.
func TestValidateRunOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts events.RunOptions
		want []string
	}{
		{"all valid", events.RunOptions{WorkingDirectory: "services/api", SafetyMode: events.SafetyReadOnly,
			ApprovalMode: events.ApprovalAuto}, nil},
		{"root", events.RunOptions{WorkingDirectory: "."}, nil},
		{"absolute", events.RunOptions{WorkingDirectory: "/etc"}, []string{"payload.options.workingDirectory"}},
		{"dot dot", events.RunOptions{WorkingDirectory: "../other"}, []string{"payload.options.workingDirectory"}},
		{"only dot dot", events.RunOptions{WorkingDirectory: ".."}, []string{"payload.options.workingDirectory"}},
		{"not clean", events.RunOptions{WorkingDirectory: "a/../../b"}, []string{"payload.options.workingDirectory"}},
		{"trailing slash", events.RunOptions{WorkingDirectory: "a/"}, []string{"payload.options.workingDirectory"}},
		{"double slash", events.RunOptions{WorkingDirectory: "a//b"}, []string{"payload.options.workingDirectory"}},
		{"control character", events.RunOptions{WorkingDirectory: "a\nb"}, []string{"payload.options.workingDirectory"}},
		{"too long", events.RunOptions{WorkingDirectory: strings.Repeat("a/", 600) + "a"}, []string{"payload.options.workingDirectory"}},
		{"long name", events.RunOptions{WorkingDirectory: strings.Repeat("a", 256)}, []string{"payload.options.workingDirectory"}},
		{"full access without network", events.RunOptions{SafetyMode: events.SafetyDangerFullAccess, NetworkAccess: new(false)},
			[]string{"payload.options.networkAccess"}},
		{"unknown modes", events.RunOptions{SafetyMode: "yolo", ApprovalMode: "never"},
			[]string{"payload.options.safetyMode", "payload.options.approvalMode"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := validEnvelope(t, commands.CreateRun)
			payloadEdit(func(p *createP) { o := tc.opts; p.Options = &o })(t, &e)
			_, err := e.Validate()
			checkProblems(t, err, tc.want)
		})
	}
}
