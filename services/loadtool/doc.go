// Package loadtool is xbot's load tool, run as `xbot bench`. Given a way to
// start a whole system (Starter), it registers a scripted agent and a bearer
// token in the system's options, starts it, and drives Options.Runs runs with
// Options.Concurrency clients through the HTTP API with the typed client
// (services/api/client): each client creates a run and follows its UI stream
// to data: [DONE], taking how the run ended from the stream's finish chunk as
// an AI SDK client does, then takes the next. The load ends once the read
// model shows every run completed. Meanwhile it samples the projectors' lag.
// After the load it reads the completed runs' events back from Postgres and
// writes them once more with the bare client libraries (package baseline) on
// the same servers, so that the system's figures can be read against a floor.
//
// The report is JSON (Report; on stdout or Options.JSONPath) and a markdown
// table that replaces the section between the `<!-- xbot bench begin -->` and
// `<!-- xbot bench end -->` markers of Options.MarkdownPath. Progress goes to
// stderr: a redrawn bar on a terminal, a plain line every few seconds
// otherwise.
//
// Figures are measured, never asserted: a run that fails is counted and
// reported, and makes Run return an error after the report is written.
package loadtool
