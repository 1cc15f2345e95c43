package api

import (
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
)

func TestFlightsAreBoundedInNumberAndTime(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	fs := newFlights()
	fs.max, fs.ttl, fs.now = 2, time.Minute, func() time.Time { return now }
	send := func(id, run string) *flight {
		return fs.start(commands.Envelope{CommandID: id, RunID: run, TenantID: "acme", Type: commands.CreateRun,
			PlatformSessionID: "sess-" + run})
	}
	send("cmd_1", "run_1")
	send("cmd_2", "run_2")
	send("cmd_3", "run_3")
	if _, ok := fs.get("acme", "cmd_1"); ok || fs.hasRun("run_1") {
		t.Error("the oldest of three commands is remembered beyond the cap of two")
	}
	if _, ok := fs.sessionRun("acme", "sess-run_1"); ok {
		t.Error("the session of a forgotten create is remembered")
	}
	if _, ok := fs.get("globex", "cmd_3"); ok {
		t.Error("another tenant's command is found")
	}
	now = now.Add(2 * time.Minute)
	if _, ok := fs.get("acme", "cmd_3"); ok {
		t.Error("a command is remembered beyond its time")
	}
	f := send("cmd_4", "run_4")
	if len(fs.byID) != 1 || len(fs.byRun) != 1 || !fs.hasRun("run_4") {
		t.Errorf("after expiry: %d commands of %d runs remembered, want only cmd_4", len(fs.byID), len(fs.byRun))
	}
	fs.resolve("cmd_4", func(*flight) (CommandRecord, string, bool) { return CommandRecord{Outcome: "accepted"}, "", true })
	if fs.hasRun("run_4") {
		t.Error("the records of a run whose commands all have an outcome are still read")
	}
	if rec, ok := f.result(); !ok || rec.Outcome != "accepted" {
		t.Errorf("the outcome of cmd_4: %+v %v", rec, ok)
	}
	fs.forget(f)
	if len(fs.byID) != 0 || len(fs.byRun) != 0 || len(fs.bySession) != 0 {
		t.Error("a forgotten command is still remembered")
	}
}
