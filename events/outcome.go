package events

// Outcome is what became of a command, as its
// runtime.command.* event and the commands read model record it.
type Outcome string

// Outcomes.
const (
	OutcomeAccepted  Outcome = "accepted"
	OutcomeRejected  Outcome = "rejected"
	OutcomeDuplicate Outcome = "duplicate"
	OutcomeNoEffect  Outcome = "no_effect"
	OutcomeApplied   Outcome = "applied"
)

// Outcomes lists every outcome.
func Outcomes() []Outcome {
	return []Outcome{OutcomeAccepted, OutcomeRejected, OutcomeDuplicate, OutcomeNoEffect, OutcomeApplied}
}
