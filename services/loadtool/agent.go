package loadtool

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/stack"
)

const (
	// agentID and tenant are the scripted agent the load runs and the tenant
	// its token acts as.
	agentID = "bench"
	tenant  = "bench"
	// acceptWait is the ?wait= of each create: long enough that a loaded
	// 2-core machine still answers "accepted" rather than "pending".
	acceptWait = 30 * time.Second
)

// tool is one invocation: the options, the token and agent it registers in
// the system's options, and the system once started.
type tool struct {
	opts  Options
	token string
	nonce string // keeps idempotency keys and baseline names unique per invocation
	// started are the system's options as configure left them (nil until
	// then): the servers the baselines write to.
	started *stack.Options
	sys     System
}

func newTool(o Options) *tool {
	return &tool{opts: o, token: newToken(), nonce: newToken()[4:12]}
}

// configure registers the scripted agent and the load's token, and raises
// the command wait to acceptWait; it remembers the options the system starts
// with.
func (t *tool) configure(o *stack.Options) error {
	if err := withLoad(o, t.token, t.profile()); err != nil {
		return err
	}
	started := *o
	t.started = &started
	return nil
}

func newToken() string {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	return "xbb_" + hex.EncodeToString(raw[:])
}

// profile is the scripted agent: Turns turns that each say a word after
// ModelLatency and make ToolCalls calls, then a final answer.
func (t *tool) profile() profile.Profile {
	f := t.opts
	var calls []profile.ScriptedCall
	var toolNames []string
	if f.Tool == "shell" {
		args, _ := json.Marshal(map[string]string{"command": f.ToolCommand})
		for range f.ToolCalls {
			calls = append(calls, profile.ScriptedCall{Name: tools.ShellName, Arguments: string(args)})
		}
		toolNames = []string{tools.ShellName}
	}
	// One delta per turn, so Delay is the turn's latency.
	const chunk = 64
	var script []profile.Turn
	for i := range f.Turns {
		script = append(script, profile.Turn{Text: fmt.Sprintf("step %d", i+1), ToolCalls: calls, ChunkChars: chunk,
			Delay: f.ModelLatency})
	}
	script = append(script, profile.Turn{Text: "bench run done", ChunkChars: chunk, Delay: f.ModelLatency})
	return profile.Profile{ID: agentID, Model: profile.ModelScripted, Tools: toolNames, Script: script,
		Limits: profile.Limits{MaxTurns: f.Turns + 2, MaxToolCalls: f.Turns*f.ToolCalls + 1, MaxWallTime: time.Hour}}
}

// withLoad registers profiles and the load's token in o, and raises its
// command wait to acceptWait.
func withLoad(o *stack.Options, token string, profiles ...profile.Profile) error {
	cat := o.Profiles
	for _, p := range profiles {
		var err error
		if cat, err = cat.With(p); err != nil {
			return err
		}
	}
	o.Profiles = cat
	tokens := map[string]string{token: tenant}
	maps.Copy(tokens, o.Tokens)
	o.Tokens = tokens
	o.WaitMax = max(o.WaitMax, acceptWait)
	return nil
}
