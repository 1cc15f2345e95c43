package contracttests

import (
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// outcomeTypes are the events that record what a command did. A duplicate
// delivery is recorded as runtime.command.duplicate and may repeat freely.
var outcomeTypes = map[events.Type]bool{
	events.RunAccepted: true, events.CommandAccepted: true, events.CommandRejected: true,
	events.CommandApplied: true, events.CommandNoEffect: true,
}

// CheckEffectsOnce checks that every command took effect at most once across
// evs: per run one runtime.run.accepted and at most one runtime.run.started,
// and per command id no outcome type recorded twice. It returns every
// violation; an empty log passes.
func CheckEffectsOnce(evs []events.Envelope) error {
	type key struct {
		run, cmd string
		typ      events.Type
	}
	perRun := map[string]map[events.Type]int{}
	outcomes := map[key]int{}
	var errs []error
	for _, e := range evs {
		if perRun[e.RunID] == nil {
			perRun[e.RunID] = map[events.Type]int{}
		}
		perRun[e.RunID][e.Type]++
		if outcomeTypes[e.Type] && e.CommandID != "" {
			k := key{e.RunID, e.CommandID, e.Type}
			if outcomes[k]++; outcomes[k] == 2 {
				errs = append(errs, fmt.Errorf("run %s command %s: %s recorded more than once (seq %d)", e.RunID, e.CommandID, e.Type, e.Seq))
			}
		}
	}
	for run, c := range perRun {
		if c[events.RunAccepted] != 1 || c[events.RunStarted] > 1 {
			errs = append(errs, fmt.Errorf("run %s: %d accepted, %d started", run, c[events.RunAccepted], c[events.RunStarted]))
		}
	}
	return errors.Join(errs...)
}
