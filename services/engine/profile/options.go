package profile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// RunOptions is what a profile allows of the per-run options a caller may
// ask for (events.RunOptions), and what a run that asks for none gets. The
// network is bounded by Sandbox.Network: a profile without it forbids
// networkAccess, one with it has the network on by default and lets a run
// turn it off (except in danger-full-access, which always has it on).
type RunOptions struct {
	// SafetyModes are the safety modes a run may ask for. Default
	// read-only and workspace-write: danger-full-access must be listed.
	SafetyModes []events.SafetyMode `yaml:"safetyModes" json:"safetyModes"`
	// SafetyMode is a run's safety mode when it asks for none; one of
	// SafetyModes. Default workspace-write.
	SafetyMode events.SafetyMode `yaml:"safetyMode" json:"safetyMode"`
	// ApprovalModes are the approval modes a run may ask for. Default ask
	// and auto: bypass must be listed.
	ApprovalModes []events.ApprovalMode `yaml:"approvalModes" json:"approvalModes"`
	// ApprovalMode is a run's approval mode when it asks for none; one of
	// ApprovalModes. Default ask.
	ApprovalMode events.ApprovalMode `yaml:"approvalMode" json:"approvalMode"`
}

// WithDefaults fills what o leaves empty.
func (o RunOptions) WithDefaults() RunOptions {
	if len(o.SafetyModes) == 0 {
		o.SafetyModes = []events.SafetyMode{events.SafetyReadOnly, events.SafetyWorkspaceWrite}
	}
	if o.SafetyMode == "" {
		o.SafetyMode = events.SafetyWorkspaceWrite
	}
	if len(o.ApprovalModes) == 0 {
		o.ApprovalModes = []events.ApprovalMode{events.ApprovalAsk, events.ApprovalAuto}
	}
	if o.ApprovalMode == "" {
		o.ApprovalMode = events.ApprovalAsk
	}
	return o
}

func (o RunOptions) validate() error {
	var errs []error
	for _, m := range o.SafetyModes {
		if !m.Valid() {
			errs = append(errs, fmt.Errorf("runOptions.safetyModes: %q is not read-only, workspace-write or danger-full-access", m))
		}
	}
	for _, m := range o.ApprovalModes {
		if !m.Valid() {
			errs = append(errs, fmt.Errorf("runOptions.approvalModes: %q is not ask, auto or bypass", m))
		}
	}
	d := o.WithDefaults()
	if !slices.Contains(d.SafetyModes, d.SafetyMode) {
		errs = append(errs, fmt.Errorf("runOptions.safetyMode %q is not one of runOptions.safetyModes", d.SafetyMode))
	}
	if !slices.Contains(d.ApprovalModes, d.ApprovalMode) {
		errs = append(errs, fmt.Errorf("runOptions.approvalMode %q is not one of runOptions.approvalModes", d.ApprovalMode))
	}
	return errors.Join(errs...)
}

// runOptionErrors are the problems of the profile's runOptions; allowing
// danger-full-access, which always has the network on, needs
// sandbox.network.
func (p Profile) runOptionErrors() []error {
	err := p.RunOptions.validate()
	if slices.Contains(p.RunOptions.WithDefaults().SafetyModes, events.SafetyDangerFullAccess) && !p.Sandbox.Network {
		err = errors.Join(err, errors.New("runOptions.safetyModes lists danger-full-access, which has the network on: it needs sandbox.network"))
	}
	if err != nil {
		return []error{fmt.Errorf("profile %q: %w", p.ID, err)}
	}
	return nil
}

// ErrOptionNotAllowed is wrapped by every *OptionError.
var ErrOptionNotAllowed = errors.New("option not allowed by the agent profile")

// OptionError lists the per-run options that ask for more than the
// agent's profile allows.
type OptionError struct {
	// Agent is the profile's id.
	Agent string
	// Refused are the options refused, in the order safetyMode,
	// approvalMode, networkAccess.
	Refused []RefusedOption
}

// RefusedOption is one option a profile does not allow.
type RefusedOption struct {
	// Option is the option's name on the wire (safetyMode, approvalMode,
	// networkAccess).
	Option string
	// Asked is the value asked for.
	Asked string
	// Allowed are the values the profile allows.
	Allowed []string
}

func (r RefusedOption) String() string {
	return fmt.Sprintf("%s %s is not allowed (allowed: %s)", r.Option, r.Asked, strings.Join(r.Allowed, ", "))
}

func (e *OptionError) Error() string {
	msgs := make([]string, len(e.Refused))
	for i, r := range e.Refused {
		msgs[i] = r.String()
	}
	return fmt.Sprintf("agent %q: %s", e.Agent, strings.Join(msgs, "; "))
}

// Unwrap makes errors.Is(err, ErrOptionNotAllowed) hold.
func (e *OptionError) Unwrap() error { return ErrOptionNotAllowed }

// EffectiveOptions merges the options a run asked for (nil: none) into
// the profile's defaults: every field of the result is set (NetworkAccess
// too). An option the profile does not allow is an *OptionError, never a
// downgrade; a malformed one (events.RunOptions.Problems) is an error too.
func (p Profile) EffectiveOptions(asked *events.RunOptions) (events.RunOptions, error) {
	o := p.RunOptions.WithDefaults()
	network := p.Sandbox.Network
	eff := events.RunOptions{SafetyMode: o.SafetyMode, ApprovalMode: o.ApprovalMode, NetworkAccess: &network}
	if asked == nil {
		return fullAccessNetwork(eff), nil
	}
	if probs := asked.Problems(); len(probs) > 0 {
		return events.RunOptions{}, fmt.Errorf("options.%s: %s", probs[0].Field, probs[0].Message)
	}
	eff.WorkingDirectory = asked.WorkingDirectory
	var refused []RefusedOption
	if m := asked.SafetyMode; m != "" {
		eff.SafetyMode = m
		if !slices.Contains(o.SafetyModes, m) {
			refused = append(refused, RefusedOption{Option: "safetyMode", Asked: string(m), Allowed: names(o.SafetyModes)})
		}
	}
	if m := asked.ApprovalMode; m != "" {
		eff.ApprovalMode = m
		if !slices.Contains(o.ApprovalModes, m) {
			refused = append(refused, RefusedOption{Option: "approvalMode", Asked: string(m), Allowed: names(o.ApprovalModes)})
		}
	}
	if n := asked.NetworkAccess; n != nil {
		eff.NetworkAccess = n
		if *n && !p.Sandbox.Network {
			refused = append(refused, RefusedOption{Option: "networkAccess", Asked: "true", Allowed: []string{"false"}})
		}
	}
	if len(refused) > 0 {
		return events.RunOptions{}, &OptionError{Agent: p.ID, Refused: refused}
	}
	return fullAccessNetwork(eff), nil
}

// fullAccessNetwork turns the network on in danger-full-access, which
// always has it (seed 002); Validate makes sure a profile that allows the
// mode allows the network.
func fullAccessNetwork(o events.RunOptions) events.RunOptions {
	if o.SafetyMode == events.SafetyDangerFullAccess {
		on := true
		o.NetworkAccess = &on
	}
	return o
}

func names[S ~string](vs []S) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
