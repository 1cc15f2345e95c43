// Package scripted is an Engine that plays the turns written in an agent
// profile instead of calling a model: each turn's text is streamed as
// runtime.item.delta events of an assistant_message item, then the run
// completes. It passes the safe points a real agent loop passes
// (before_model_request, after_model_response, before_run_terminal), so
// cancellation, crash recovery and the log invariant are exercised end to end
// without a model provider. `xbot dev` and the tests use it.
package scripted
