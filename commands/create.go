package commands

import "github.com/xbot-runtime/xbot/events"

// decide admits a CreateRun: a new run of a known agent, on its sandbox
// key's partition, is accepted and queued for its sandbox key.
func (p *CreateRunPayload) decide(st *events.RunState, c Envelope, opts AdmitOptions) Decision {
	if opts.KnownAgent == nil {
		panic("commands.Admit: AdmitOptions.KnownAgent is required") // wiring bug
	}
	if st.Exists() {
		return reject(c, events.CodeRunAlreadyExists, "run %s already exists", c.RunID)
	}
	if !opts.KnownAgent(p.AgentID) {
		return reject(c, events.CodeUnknownAgent, "agent %q is not configured", p.AgentID)
	}
	if !Routed(c.RunID, p.SandboxKey, opts.Partitions) {
		return reject(c, events.CodeSandboxKeyMisrouted, "runId %s is not on partition %d of its sandbox key; derive it with commands.RunIDFor",
			c.RunID, SandboxPartition(p.SandboxKey, opts.Partitions))
	}
	return Decision{Outcome: events.OutcomeAccepted, Then: EffectEnqueue, Events: []events.Draft{{Type: events.RunAccepted,
		CommandID: c.CommandID, Payload: events.RunAcceptedPayload{
			AgentID: p.AgentID, Input: p.Input, SandboxKey: p.SandboxKey, ParentRunID: p.ParentRunID,
			Metadata: p.Metadata, IdempotencyKey: c.IdempotencyKey, Actor: c.Actor, SessionGrants: inheritable(st, p.SessionGrants),
			Options: p.Options, InputID: p.InputID, InputIDs: p.InputIDs,
			Fingerprint: Fingerprint(c)}}}}
}
