package commands

import "github.com/xbot-runtime/xbot/events"

// options checks the per-run options a command carries at field (e.g.
// "payload.options"): their shape only. What the agent's profile allows is
// checked by the API and, again, by the executor when the run starts.
func (c *checker) options(field string, o *events.RunOptions) {
	if o == nil {
		return
	}
	for _, p := range o.Problems() {
		c.add(field+"."+p.Field, "%s", p.Message)
	}
}
