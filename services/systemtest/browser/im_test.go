//go:build browser

package browser_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The IM chat: what the user says and what the agent answers.
const (
	imToken  = "tok-im-browser"
	imAgent  = "im-deployer"
	imPrompt = "Please deploy the site."
	imFirst  = "I will deploy the site; a person has to approve that first."
	imFinal  = "The deploy ran. All done."
	// imToolOutput is what the approved call prints.
	imToolOutput = "deploy site"
	imAllow      = "Allow"
)

// imSystem is what an IM gateway is started against: a running system, the
// Kafka cluster its outbox is on, the agent of new sessions' first runs and
// the token the page connects with.
type imSystem struct {
	Stack  *stack.Stack
	Kafka  kafka.Config
	Agent  string
	Token  string
	Logger *zap.Logger
}

// imGateway starts an IM gateway against sys for the test's lifetime and
// returns the http URL of its first sandbox endpoint's mount path
// (http://host:port/sandbox). imgateway_test.go sets it by wiring
// services/imgateway; a build without it skips the end-to-end test.
var imGateway func(t *testing.T, sys imSystem) string

// imDeployer says what it will do, runs a deploy (which the policy sends for
// approval) and reports the deploy.
func imDeployer() profile.Profile {
	rule := policy.Rule{ID: "deploy", Tool: "shell", Argument: "command", Pattern: `^echo deploy`,
		Action: policy.RequireApproval, Reason: "deploys need a person's approval"}
	return profile.Profile{ID: imAgent, Model: profile.ModelScripted, Tools: []string{"shell"},
		Policy: policy.Config{Rules: []policy.Rule{rule}}, Script: []profile.Turn{
			{Text: imFirst, ToolCalls: []profile.ScriptedCall{{Name: "shell", Arguments: `{"command":"echo ` + imToolOutput + `"}`}}},
			{Text: imFinal},
		}}
}

// TestIMChatInABrowser drives the gateway's sandbox chat page in headless
// Chromium against a real system: send a message, see the reply frames
// arrive, press Allow on the approval request, see the final answer, and
// after a reload the conversation's history with the tool call's output;
// then a second tab takes the endpoint and the first is closed 4000.
func TestIMChatInABrowser(t *testing.T) {
	if imGateway == nil {
		t.Skip("the IM gateway is not wired into this build (imgateway_test.go)")
	}
	chromium := chromiumPath(t)
	dir := imDriveDir(t)
	sys := startIMSystem(t)
	page := imGateway(t, sys) + "?token=" + imToken
	res := runIMDrive(t, dir, chromium, imArtifactsDir(t, "im"), "--url", page, "--prompt", imPrompt,
		"--allow", imAllow, "--final", imFinal, "--tool-output", imToolOutput, "--replace")
	t.Logf("ready %+v; %d screenshots", res.Ready, len(res.Screenshots))

	if res.Ready.CanExecute != "yes" || res.Ready.Endpoint == "" {
		t.Errorf("the ready frame shows %+v, want an endpoint that can execute", res.Ready)
	}
	checkSentFrames(t, res.Sent)
	checkArrival(t, res)
	checkToolResultLive(t, res)
	checkHistory(t, res)
	checkIMRun(t, sys)
	if res.Replaced != "closed 4000 replaced by new sandbox client" || res.OtherStatus != "ready" {
		t.Errorf("a second tab left the first %q and itself %q, want the first closed 4000 (without a reconnect) and the second ready",
			res.Replaced, res.OtherStatus)
	}
}

// checkSentFrames: the page sent the prompt and then the Allow button's
// action, each a frame of the conversation with a fresh messageId.
func checkSentFrames(t *testing.T, sent []string) {
	t.Helper()
	type frame struct {
		Type, ID, MessageID string
		Content             []struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
	}
	if len(sent) != 2 {
		t.Fatalf("the page sent %d frames, want the prompt and the action: %q", len(sent), sent)
	}
	var fs [2]frame
	for i, s := range sent {
		if err := json.Unmarshal([]byte(s), &fs[i]); err != nil || len(fs[i].Content) != 1 {
			t.Fatalf("frame %d %q: %v", i, s, err)
		}
		if !regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`).MatchString(fs[i].MessageID) {
			t.Errorf("frame %d's messageId %q does not match the wire's pattern", i, fs[i].MessageID)
		}
	}
	if fs[0].Type != "private" || fs[0].ID == "" || fs[0].Content[0].Type != "text" || fs[0].Content[0].Data["text"] != imPrompt {
		t.Errorf("the prompt's frame %+v, want a text segment of the private conversation", fs[0])
	}
	action := fs[1].Content[0]
	if fs[1].ID != fs[0].ID || fs[1].MessageID == fs[0].MessageID || action.Type != "action" ||
		action.Data["id"] == "" || action.Data["payload"] == "" {
		t.Errorf("the Allow button's frame %+v, want an action segment {id, payload} of the same conversation under a new messageId", fs[1])
	}
}

// checkArrival: the first reply and the approval request arrived before
// Allow was pressed, the final answer after, in the order the run said them.
func checkArrival(t *testing.T, res imDrive) {
	t.Helper()
	before := strings.Join(res.BeforeAllow, "\n")
	if !strings.Contains(before, imFirst) || !strings.Contains(before, imAllow) || strings.Contains(before, imFinal) {
		t.Errorf("before Allow the page showed %q, want the first reply and the approval request only", res.BeforeAllow)
	}
	first, final := -1, -1
	for i, m := range res.Arrived {
		if first < 0 && strings.Contains(m, imFirst) {
			first = i
		}
		if strings.Contains(m, imFinal) {
			final = i
		}
	}
	if first < 0 || final <= first {
		t.Errorf("reply frames arrived as %q, want the first reply before the final answer", res.Arrived)
	}
}

// checkToolResultLive: the gateway delivers the tool call's result as it
// happens (the IM view's tool_result message): after Allow, before the final
// answer.
func checkToolResultLive(t *testing.T, res imDrive) {
	t.Helper()
	tool, final := -1, -1
	for i, m := range res.Arrived {
		if tool < 0 && strings.Contains(m, "shell: ") && strings.Contains(m, imToolOutput) && !strings.Contains(m, "Approval needed") {
			tool = i // the tool_result message, not the approval request quoting the command
		}
		if strings.Contains(m, imFinal) {
			final = i
		}
	}
	if tool < 0 || final <= tool {
		t.Errorf("reply frames arrived as %q, want the tool's result before the final answer", res.Arrived)
	}
}

// checkHistory: after the reload the page shows the conversation from the
// read model: the prompt, the tool call with its output, the final answer.
func checkHistory(t *testing.T, res imDrive) {
	t.Helper()
	var all []string
	for _, m := range res.History {
		all = append(all, m.From+": "+m.Text)
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"user: " + imPrompt, imToolOutput, "bot: " + imFinal} {
		if !strings.Contains(joined, want) {
			t.Errorf("the history after the reload %q lacks %q", all, want)
		}
	}
}

// checkIMRun: the chat made one run, completed, its deploy approved once by
// the page's Allow and run once.
func checkIMRun(t *testing.T, sys imSystem) {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: "http://" + sys.Stack.Addr(), Token: imToken})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := c.AllRuns(t.Context(), client.RunQuery{})
	if err != nil || len(runs) != 1 || runs[0].Status != "completed" || runs[0].PlatformSessionID == "" {
		t.Fatalf("runs %+v %v, want one completed run of a session", runs, err)
	}
	approvals, err := c.AllApprovals(t.Context(), client.ApprovalQuery{RunID: runs[0].RunID})
	if err != nil || len(approvals) != 1 || approvals[0].Decision != "allow" {
		t.Errorf("approvals %+v %v, want the page's one allow", approvals, err)
	}
	items, err := c.AllItems(t.Context(), runs[0].RunID, client.Page{})
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, it := range items {
		if it.ToolName == "shell" {
			calls = append(calls, it.Status+": "+deref(it.Output))
		}
	}
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "completed: ") || !strings.Contains(calls[0], imToolOutput) {
		t.Errorf("shell calls %q, want one, completed, its output holding %q", calls, imToolOutput)
	}
}

// startIMSystem runs a whole system (its own Kafka cluster and database)
// with the IM deployer in bwrap sandboxes, and the IM view's outbox.
func startIMSystem(t *testing.T) imSystem {
	t.Helper()
	cat, err := profile.NewCatalog(imDeployer())
	if err != nil {
		t.Fatal(err)
	}
	comp := bwrapProvider(t)
	logger := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	kcfg := kafkatest.NewCluster(t, 4).Config()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st, err := stack.Start(ctx, stack.Options{
		Kafka: kcfg, PGDSN: pgtest.NewDatabase(t), APIAddr: "127.0.0.1:0",
		Tokens: map[string]string{imToken: "acme/im-browser"}, Profiles: cat, ExecutorID: "im-browser",
		Compute: comp, CommandKeys: commands.GenerateKeyRing(), Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Stop(context.Background()) })
	return imSystem{Stack: st, Kafka: kcfg, Agent: imAgent, Token: imToken, Logger: logger}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
