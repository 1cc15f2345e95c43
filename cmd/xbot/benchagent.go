package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/stack"
)

const (
	benchAgent  = "bench"
	benchTenant = "bench"
	// acceptWait is the ?wait= of each create: long enough that a loaded
	// 2-core machine still answers "accepted" rather than "pending".
	acceptWait = 30 * time.Second
)

// bench is one load run against a started system.
type bench struct {
	flags benchFlags
	s     *settings
	token string
	nonce string // keeps idempotency keys and baseline names unique per invocation
	opts  stack.Options
	st    *stack.Stack
}

// profile is the scripted bench agent: --turns turns that each say a word
// after --model-latency and make --tool-calls calls, then a final answer.
func (b *bench) profile() profile.Profile {
	f := b.flags
	var calls []profile.ScriptedCall
	var toolNames []string
	if f.tool == "shell" {
		args, _ := json.Marshal(map[string]string{"command": f.toolCommand})
		for range f.toolCalls {
			calls = append(calls, profile.ScriptedCall{Name: tools.ShellName, Arguments: string(args)})
		}
		toolNames = []string{tools.ShellName}
	}
	// One delta per turn, so Delay is the turn's latency.
	const chunk = 64
	var script []profile.Turn
	for i := range f.turns {
		script = append(script, profile.Turn{Text: fmt.Sprintf("step %d", i+1), ToolCalls: calls, ChunkChars: chunk,
			Delay: f.modelLatency})
	}
	script = append(script, profile.Turn{Text: "bench run done", ChunkChars: chunk, Delay: f.modelLatency})
	return profile.Profile{ID: benchAgent, Model: profile.ModelScripted, Tools: toolNames, Script: script,
		Limits: profile.Limits{MaxTurns: f.turns + 2, MaxToolCalls: f.turns*f.toolCalls + 1, MaxWallTime: time.Hour}}
}
