package systemtest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/scripted"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/skills"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end test of skills (issue 19): a run's skill versions are
// resolved when it starts, named exactly in its snapshot, mounted read-only
// in its bwrap sandbox, and described to the model.

// addSkill adds version of skill name to store.
func addSkill(t *testing.T, store *skills.Store, name, version, body string) skills.Version {
	t.Helper()
	dir := t.TempDir()
	md := "---\nname: " + name + "\ndescription: Greets in the house style.\nversion: " + version + "\n---\n" + body
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o600); err != nil {
		t.Fatal(err)
	}
	v, _, err := store.Add(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// frozenSnapshot is the run's capability snapshot, through the API.
func frozenSnapshot(t *testing.T, st *stack.Stack, runID string) profile.Snapshot {
	t.Helper()
	snap, err := apiOf(t, st).GetRunSnapshot(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var s profile.Snapshot
	if err := json.Unmarshal(snap.Snapshot, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSkillsAreFrozenMountedReadOnlyAndOnlyLaterRunsSeeANewVersion(t *testing.T) {
	t.Parallel()
	base := computetest.Dir(t)
	if err := os.Chmod(base, 0o711); err != nil { // #nosec G302 -- the sandbox user passes through to the store
		t.Fatal(err)
	}
	store, err := skills.New(filepath.Join(base, "skills"), skills.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	v1 := addSkill(t, store, "demo", "1.0.0", "# House style\nSay hello twice.\n")
	const skill = "/skills/demo@1.0.0"
	agent := profile.Profile{ID: "skilled", Model: profile.ModelScripted, Tools: []string{"shell", "read_file", "write_file", "ask_user"},
		Skills: []profile.SkillRef{{Name: "demo", Version: "^1"}}, Policy: noPolicy,
		Script: []profile.Turn{
			{ToolCalls: []profile.ScriptedCall{{Name: "read_file", Arguments: `{"path":"` + skill + `/SKILL.md"}`},
				{Name: "shell", Arguments: `{"command":"echo tampered > ` + skill + `/SKILL.md; echo write=$?; touch ` + skill + `/new; echo touch=$?"}`},
				{Name: "write_file", Arguments: `{"path":"` + skill + `/notes.md","content":"x"}`}}},
			{ToolCalls: call1("ask_user", `{"question":"go on?"}`)},
			{ToolCalls: call1("shell", `{"command":"ls /skills"}`)},
			{Text: "done"},
		}}
	var (
		mu      sync.Mutex
		prompts []string
	)
	e := newEnv(t)
	st, _ := bwrapAgentEnv(t, e, func(o *stack.Options) {
		o.Skills = store
		o.Models = func(p profile.Profile) (model.Provider, string, error) {
			return &scripted.Provider{Script: p.Script, Observe: func(r model.Request) {
					mu.Lock()
					defer mu.Unlock()
					prompts = append(prompts, r.Messages[0].Content)
				}},
				profile.ModelScripted, nil
		}
	}, agent)
	first := create(t, st, "skilled", "go", "skill-1").RunID
	waitStatus(t, st, first, "paused", 60*time.Second)
	if got := frozenSnapshot(t, st, first).Skills; len(got) != 1 || got[0].ID != "demo@1.0.0" || got[0].Digest != v1.Digest {
		t.Fatalf("the first run's snapshot names skills %+v, want demo@1.0.0 %s", got, v1.Digest)
	}
	mu.Lock()
	prompt := prompts[0]
	mu.Unlock()
	if !strings.Contains(prompt, "- demo (version 1.0.0, /skills/demo@1.0.0/SKILL.md): Greets in the house style.") {
		t.Errorf("the model's system prompt: %q", prompt)
	}
	checkSkillReadOnly(t, st, first)

	v2 := addSkill(t, store, "demo", "1.1.0", "# House style\nSay hello three times.\n")
	second := create(t, st, "skilled", "go", "skill-2").RunID
	waitStatus(t, st, second, "paused", 60*time.Second)
	if got := frozenSnapshot(t, st, second).Skills; len(got) != 1 || got[0].ID != "demo@1.1.0" || got[0].Digest != v2.Digest {
		t.Errorf("the second run's snapshot names skills %+v, want demo@1.1.0", got)
	}
	answerQuestion(t, st, first, "yes")
	waitStatus(t, st, first, "completed", 60*time.Second)
	if out := lastExec(t, st, first); strings.TrimSpace(out) != "demo@1.0.0" {
		t.Errorf("after the new version was added, the first run sees /skills as %q, want only demo@1.0.0", out)
	}
	if _, err := store.Resolve(profile.SkillRef{Name: "demo", Version: "1.0.0"}); err != nil {
		t.Errorf("the stored version changed: %v", err)
	}
	e.invariants(st)
}

// checkSkillReadOnly checks the first turn of the skilled agent: the skill's
// instructions were read, and neither a command nor write_file changed it.
func checkSkillReadOnly(t *testing.T, st *stack.Stack, runID string) {
	t.Helper()
	var read, shell string
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		r := dataOf[events.ToolResultData](t, p.Data)
		switch r.ToolName {
		case "read_file":
			read = r.Output
		case "shell":
			shell = r.Exec.Stdout + r.Exec.Stderr
		}
	}
	if !strings.Contains(read, "Say hello twice.") {
		t.Errorf("read_file of SKILL.md returned %q", read)
	}
	if !strings.Contains(shell, "Read-only file system") || strings.Contains(shell, "write=0") || strings.Contains(shell, "touch=0") {
		t.Errorf("writing into the skill from a command: %q", shell)
	}
	failed := payloads[events.ItemFailedPayload](t, st, runID)
	if len(failed) != 1 || failed[0].ItemType != events.ItemFileChange || !strings.Contains(failed[0].Message, "read-only") {
		t.Errorf("write_file into the skill: %+v", failed)
	}
}

// answerQuestion answers the run's open question.
func answerQuestion(t *testing.T, st *stack.Stack, runID, text string) {
	t.Helper()
	var item string
	for _, ev := range eventsOf(t, st, runID, events.ItemStarted) {
		if payloadOf[events.ItemStartedPayload](t, ev).ItemType == events.ItemClarificationRequest {
			item = ev.ItemID
		}
	}
	input(t, st, runID, "clarification", text, "answer-"+item)
}

// lastExec is the output of the run's last command.
func lastExec(t *testing.T, st *stack.Stack, runID string) string {
	t.Helper()
	out := ""
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if r := dataOf[events.ToolResultData](t, p.Data); r.Exec != nil {
			out = r.Exec.Stdout
		}
	}
	return out
}

// TestASkillChangedOnDiskIsNotMountedWhenTheRunResumes: a paused run's
// next sandbox (after the pause, as after a takeover) checks its skill's
// files against the digest its snapshot froze; content changed under the
// version meanwhile is not shown to the run, its tool fails saying why.
func TestASkillChangedOnDiskIsNotMountedWhenTheRunResumes(t *testing.T) {
	t.Parallel()
	store, err := skills.New(filepath.Join(t.TempDir(), "skills"), skills.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	v := addSkill(t, store, "demo", "1.0.0", "# House style\nSay hello twice.\n")
	agent := profile.Profile{ID: "resumer", Model: profile.ModelScripted, Tools: []string{"read_file", "ask_user"},
		Skills: []profile.SkillRef{{Name: "demo"}}, Policy: noPolicy,
		Script: []profile.Turn{
			{ToolCalls: call1("ask_user", `{"question":"go on?"}`)},
			{ToolCalls: call1("read_file", `{"path":"/skills/demo@1.0.0/SKILL.md"}`)},
			{Text: "done"},
		}}
	e := newEnv(t).withAgents(agent)
	st := e.startWith("all", func(o *stack.Options) {
		o.Compute, o.Skills = localCompute(t, t.TempDir()), store
		o.Models = (&requests{got: map[string][]model.Request{}}).resolver
	})
	runID := create(t, st, "resumer", "go", "resumer-1").RunID
	waitStatus(t, st, runID, "paused", 30*time.Second)
	md := filepath.Join(store.Path(v.SkillVersion), "SKILL.md")
	for _, p := range []string{filepath.Dir(md), md} {
		if err := os.Chmod(p, 0o700); err != nil { // #nosec G302 -- the test tampers with its own store
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(md, []byte("---\nname: demo\ndescription: x\nversion: 1.0.0\n---\nSay goodbye.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	answerQuestion(t, st, runID, "yes")
	waitStatus(t, st, runID, "completed", 30*time.Second)
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if strings.Contains(p.Content, "goodbye") {
			t.Errorf("the resumed run read the changed skill: %q", p.Content)
		}
	}
	failed := payloads[events.ItemFailedPayload](t, st, runID)
	if len(failed) != 1 || !strings.Contains(failed[0].Message, skills.ErrTampered.Error()) {
		t.Errorf("the resumed run's read of the changed skill failed %+v", failed)
	}
	e.invariants(st)
}
