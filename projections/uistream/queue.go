package uistream

import "github.com/xbot-runtime/xbot/events"

// Queue is the data of a data-queue part (id = the run id): the run waits
// for its sandbox key, another run of the key holding it. Position 1 is the
// next to start. The part comes with each runtime.run.queued, so a run that
// moves up sends it again with the same id, and the client keeps the
// latest; the run's next chunks (its start, or its resumed reply) say it
// runs.
type Queue struct {
	RunID    string `json:"runId"`
	Position int    `json:"position"`
}

// queued shows the run's place in its key's queue. A run resumed from a
// pause while its key was taken reopens its message: the person answered,
// and the reply goes on (after its turn) in that message.
func (m *Mapper) queued(p *events.RunQueuedPayload) {
	m.open()
	m.emit(dataChunk("queue", m.runID, Queue{RunID: m.runID, Position: p.Position}, false))
}
