//go:build browser

package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(kafkatest.Wrap(m))) }

const (
	token  = "tok-browser"
	chatID = "browser-chat"
	agent  = "deployer"
	prompt = "Please deploy the site."
	// end is the last words of the reply.
	end = "All done."
	// driveTimeout bounds each wait of the drive for a state of the page
	// (a reply to start, a button to appear): generous for a loaded CI
	// machine, where a cold Chromium takes seconds.
	driveTimeout = 60 * time.Second
)

// deployer streams a sentence, asks to run a deploy (which the policy sends
// for approval), then streams a long reply, slowly enough (about 13 s) that
// a reload lands in its middle.
func deployer() profile.Profile {
	rule := policy.Rule{ID: "deploy", Tool: "shell", Argument: "command", Pattern: `^echo deploy`,
		Action: policy.RequireApproval, Reason: "deploys need a person's approval"}
	long := "The deploy ran. " + strings.Repeat("Checking the site, page by page, as it comes up. ", 27) + end
	return profile.Profile{ID: agent, Model: profile.ModelScripted, Tools: []string{"shell"},
		Policy: policy.Config{Rules: []policy.Rule{rule}}, Script: []profile.Turn{
			{Text: "I will deploy the site; a person has to approve that first.", ChunkChars: 3, Delay: 30 * time.Millisecond,
				ToolCalls: []profile.ScriptedCall{{Name: "shell", Arguments: `{"command":"echo deploy site"}`}}},
			{Text: long, ChunkChars: 4, Delay: 40 * time.Millisecond},
		}}
}

// drive is what drive.mjs reports.
type drive struct {
	Screenshots        []string `json:"screenshots"`
	Lengths            []int    `json:"lengths"`
	RunID              string   `json:"runId"`
	ResumedRunID       string   `json:"resumedRunId"`
	BeforeReload       string   `json:"beforeReload"`
	StatusBeforeReload string   `json:"statusBeforeReload"`
	FinalText          string   `json:"finalText"`
	ToolStates         []string `json:"toolStates"`
	FollowUpRunID      string   `json:"followUpRunId"`
	CORS               []struct {
		Origin      string `json:"origin"`
		Health      string `json:"health"`
		Preflighted string `json:"preflighted"`
	} `json:"cors"`
}

// TestChatInABrowser drives the chat page in headless Chromium against a
// real system: send a message and watch the reply stream, approve the tool
// call with a click, reload mid-reply and see the reply resume; then call
// the API from the page's origin (allowed by CORS) and from another.
func TestChatInABrowser(t *testing.T) {
	chromium := chromiumPath(t)
	web, site := webDir(t)
	artifacts := artifactsDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	pageOrigin := fmt.Sprintf("http://127.0.0.1:%d", port)
	// The same server under another name is another origin, which CORS does not allow.
	otherOrigin := fmt.Sprintf("http://localhost:%d", port)
	st := startSystem(t, api.CORSConfig{AllowedOrigins: []string{pageOrigin}})
	apiURL := &url.URL{Scheme: "http", Host: st.Addr()}
	srv := &http.Server{Handler: bff(site, apiURL, token), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	chat := "/?chat=" + chatID + "&agent=" + agent + "&submit=" + submitVia(st)
	res := runDrive(t, web, chromium, "--url", pageOrigin+chat, "--other-origin-url", otherOrigin+chat,
		"--api", apiURL.String(), "--artifacts", artifacts, "--prompt", prompt, "--end", end, "--follow-up", "And once more, please.")
	t.Logf("messages submitted via %s; screenshots in %s: %d", submitVia(st), artifacts, len(res.Screenshots))

	if len(res.Lengths) < 2 {
		t.Errorf("the reply's first text appeared at lengths %v, want it to grow while streaming", res.Lengths)
	}
	if res.StatusBeforeReload != "streaming" || strings.Contains(res.BeforeReload, end) {
		t.Errorf("the reload was not mid-reply: status %q, text %q", res.StatusBeforeReload, res.BeforeReload)
	}
	if res.ResumedRunID != res.RunID || !strings.HasPrefix(res.FinalText, res.BeforeReload) || !strings.HasSuffix(res.FinalText, end) {
		t.Errorf("the resumed reply (run %s, was %s) reads %q, want what was shown before the reload, continued to %q",
			res.ResumedRunID, res.RunID, res.FinalText, end)
	}
	if !slices.Equal(res.ToolStates, []string{"output-available"}) {
		t.Errorf("tool parts %v, want one output-available", res.ToolStates)
	}
	checkCORS(t, res, pageOrigin, otherOrigin)
	checkRuns(t, st, res)
}

// sessionSubmit is the route of the session-level submit.
const sessionSubmit = "/v1/sessions/{platformSessionId}/messages"

// submitVia is how the page's transport submits messages: to the session
// when the API has the session-level submit, else through the run endpoints.
func submitVia(st *stack.Stack) string {
	if p := st.API.OpenAPI().Paths[sessionSubmit]; p != nil && p.Post != nil {
		return "session"
	}
	return "runs"
}

// checkCORS: the page's origin reads the API's answers (a 401 for the made-up
// token included); another origin's page reads nothing.
func checkCORS(t *testing.T, res drive, allowed, other string) {
	t.Helper()
	if len(res.CORS) != 2 {
		t.Fatalf("cors probes %+v", res.CORS)
	}
	if p := res.CORS[0]; p.Origin != allowed || p.Health != "200" || p.Preflighted != "401" {
		t.Errorf("from the allowed origin: %+v, want health 200 and the preflighted POST's 401", p)
	}
	if p := res.CORS[1]; p.Origin != other || p.Health != "TypeError" || p.Preflighted != "TypeError" {
		t.Errorf("from another origin: %+v, want both refused by the browser (TypeError)", p)
	}
}

// checkRuns: the first run completed, and its one approval is the page's
// allow; the follow-up is another run of the same session.
func checkRuns(t *testing.T, st *stack.Stack, res drive) {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: "http://" + st.Addr(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	runID := res.RunID
	run, err := c.GetRun(t.Context(), runID)
	if err != nil || run.Status != "completed" || run.PlatformSessionID != chatID {
		t.Errorf("run %s: %+v %v, want completed in session %s", runID, run, err, chatID)
	}
	next, err := c.GetRun(t.Context(), res.FollowUpRunID)
	if err != nil || next.RunID == runID || next.PlatformSessionID != chatID {
		t.Errorf("follow-up run %s: %+v %v, want another run of session %s", res.FollowUpRunID, next, err, chatID)
	}
	approvals, err := c.AllApprovals(t.Context(), client.ApprovalQuery{RunID: runID})
	if err != nil || len(approvals) != 1 || approvals[0].Decision != "allow" || approvals[0].Scope != "item" {
		t.Errorf("approvals of %s: %+v %v, want the page's one allow", runID, approvals, err)
	}
}

// runDrive runs drive.mjs with args and returns its report.
func runDrive(t *testing.T, dir, chromium string, args ...string) drive {
	t.Helper()
	return runScript[drive](t, dir, chromium, "drive.mjs", args...)
}

// report is what a drive script prints: its screenshots at least.
type report interface{ screenshotPaths() []string }

func (d drive) screenshotPaths() []string { return d.Screenshots }

// runScript runs the drive script in dir with args (and --timeout-ms) and
// returns its report; every screenshot it names must be a PNG on disk.
func runScript[R report](t *testing.T, dir, chromium, script string, args ...string) R {
	t.Helper()
	// Each of the drive's steps waits at most driveTimeout; ten of them
	// bound the whole.
	ctx, cancel := context.WithTimeout(t.Context(), 10*driveTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script, "--timeout-ms",
		fmt.Sprint(driveTimeout.Milliseconds())}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XBOT_CHROMIUM="+chromium, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res R
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		t.Fatalf("%s: %v (%v)\nstdout: %s\nstderr: %s", script, err, jerr, stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("%s failed (%v); screenshots %v\n%s", script, err, res.screenshotPaths(), stderr.String())
	}
	for _, s := range res.screenshotPaths() {
		if fi, err := os.Stat(s); err != nil || fi.Size() == 0 || filepath.Ext(s) != ".png" {
			t.Errorf("screenshot %s: %v", s, err)
		}
	}
	return res
}

// bwrapProvider is a bwrap sandbox provider of the test's own; the test is
// skipped (failed in CI) when bwrap is unavailable.
func bwrapProvider(t *testing.T) compute.Provider {
	t.Helper()
	comp, err := bwrap.New(bwrap.Config{Dir: computetest.Dir(t), Logger: zap.NewNop()})
	if errors.Is(err, compute.ErrUnavailable) {
		unavailable(t, "bwrap unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return comp
}

// startSystem runs a whole system (its own Kafka cluster and database) with
// the deployer agent in bwrap sandboxes and the API's CORS settings.
func startSystem(t *testing.T, cors api.CORSConfig) *stack.Stack {
	t.Helper()
	cat, err := profile.NewCatalog(deployer())
	if err != nil {
		t.Fatal(err)
	}
	comp := bwrapProvider(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st, err := stack.Start(ctx, stack.Options{
		Kafka: kafkatest.NewCluster(t, 4).Config(), PGDSN: pgtest.NewDatabase(t), APIAddr: "127.0.0.1:0",
		Tokens: map[string]string{token: "acme/browser"}, Profiles: cat, ExecutorID: "browser",
		Compute: comp, CORS: cors, CommandKeys: commands.GenerateKeyRing(),
		Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Stop(context.Background()) })
	return st
}
