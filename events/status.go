package events

// Status is a run's lifecycle state.
type Status string

// Run states. The zero Status means the run has no accepted event yet, which
// is the "created" state of the seed's state machine.
const (
	StatusCreated   Status = "created"
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusPaused    Status = "paused"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
	StatusExpired   Status = "expired"
)

// Statuses lists every state, in lifecycle order.
func Statuses() []Status {
	return []Status{StatusCreated, StatusQueued, StatusRunning, StatusPaused,
		StatusCompleted, StatusFailed, StatusCancelled, StatusExpired}
}

// Terminal reports whether s is final.
func (s Status) Terminal() bool {
	switch s {
	case StatusCompleted, StatusFailed, StatusCancelled, StatusExpired:
		return true
	default:
		return false
	}
}

// Active reports whether the run exists and is not final.
func (s Status) Active() bool {
	switch s {
	case StatusQueued, StatusRunning, StatusPaused:
		return true
	default:
		return false
	}
}

// Valid reports whether s names a state.
func (s Status) Valid() bool {
	for _, v := range Statuses() {
		if s == v {
			return true
		}
	}
	return false
}

func (s Status) orCreated() Status {
	if s == "" {
		return StatusCreated
	}
	return s
}

// statusAfter maps lifecycle events to the state they lead to.
var statusAfter = map[Type]Status{
	RunAccepted:  StatusQueued,
	RunStarted:   StatusRunning,
	RunPaused:    StatusPaused,
	RunResumed:   StatusRunning,
	RunQueued:    StatusQueued,
	RunCompleted: StatusCompleted,
	RunFailed:    StatusFailed,
	RunCancelled: StatusCancelled,
	RunExpired:   StatusExpired,
}

// StatusAfter returns the state a lifecycle event leads to; ok is false for
// events that do not change the run's state.
func StatusAfter(t Type) (s Status, ok bool) {
	s, ok = statusAfter[t]
	return s, ok
}

// allowedFrom lists, per lifecycle event, the states it may leave.
var allowedFrom = map[Type][]Status{
	RunAccepted: {StatusCreated},
	RunStarted:  {StatusQueued},
	RunPaused:   {StatusRunning},
	// A run resumed while another run held its sandbox key waits queued
	// (paused → queued) and resumes when it gets the key (queued → running).
	RunResumed:   {StatusPaused, StatusQueued},
	RunQueued:    {StatusQueued, StatusPaused},
	RunCompleted: {StatusRunning},
	RunFailed:    {StatusRunning},
	RunCancelled: {StatusQueued, StatusRunning, StatusPaused},
	RunExpired:   {StatusPaused},

	RunCheckpointRestored:     {StatusQueued, StatusRunning, StatusPaused},
	CommandAccepted:           {StatusQueued, StatusRunning, StatusPaused},
	ItemStarted:               {StatusRunning},
	ItemDelta:                 {StatusRunning},
	ItemCompleted:             {StatusRunning, StatusPaused, StatusQueued},
	ItemFailed:                {StatusRunning, StatusPaused, StatusQueued},
	ItemAwaitingApproval:      {StatusRunning},
	ApprovalDecisionSubmitted: {StatusPaused, StatusRunning},
	PermissionGrantApplied:    {StatusQueued, StatusRunning, StatusPaused},
	ContextCompacted:          {StatusRunning, StatusPaused},
	CapabilitySnapshotFrozen:  {StatusQueued, StatusRunning},
	SandboxAttached:           {StatusRunning},
	// Outcomes that change nothing are recorded in every state, terminal ones
	// included: they are the audit trail of refused or repeated commands.
	CommandRejected:  Statuses(),
	CommandNoEffect:  Statuses(),
	CommandDuplicate: Statuses(),
	// A session grant outlives the run that gave it, so its revocation is
	// recorded on every run that holds it, a finished one included: a
	// follow-up of that run must not inherit it.
	PermissionGrantRevoked: {StatusQueued, StatusRunning, StatusPaused, StatusCompleted, StatusFailed, StatusCancelled, StatusExpired},
	// applied follows the effect it reports, which may be a terminal event
	// (a cancel); it needs an existing run.
	CommandApplied: {StatusQueued, StatusRunning, StatusPaused, StatusCompleted, StatusFailed, StatusCancelled, StatusExpired},
}

// Allowed reports whether an event of type t may be appended to a run in state s
// (ignoring payload and item checks that Fold also makes).
func Allowed(s Status, t Type) bool {
	for _, from := range allowedFrom[t] {
		if from == s.orCreated() {
			return true
		}
	}
	return false
}
