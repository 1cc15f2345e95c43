package loadtool

import (
	"errors"
	"flag"
	"fmt"
	"time"
)

// Options are the load's shape and where its report goes: the flags of
// `xbot bench` (BindFlags sets their defaults).
type Options struct {
	// Runs is how many runs to create (>= 1).
	Runs int
	// Concurrency is how many clients create runs at once, each following its
	// run's stream before it creates the next (>= 1).
	Concurrency int
	// Turns is how many model turns call tools before the final answer, and
	// ToolCalls how many tool calls each of them makes (>= 0).
	Turns, ToolCalls int
	// ModelLatency is the scripted model's latency per turn (>= 0).
	ModelLatency time.Duration
	// Tool is what the turns call: "shell" (it runs ToolCommand in the
	// sandbox) or "none".
	Tool, ToolCommand string
	// JSONPath receives the JSON report; empty writes it to stdout.
	JSONPath string
	// MarkdownPath, if set, is a markdown file whose bench section is
	// replaced with the report's table (appended when it has none).
	MarkdownPath string
	// Timeout bounds the whole load, the system's start included.
	Timeout time.Duration
	// CPUProfile, if set, receives a CPU profile of the whole process during
	// the load (go tool pprof).
	CPUProfile string
}

// BindFlags defines the flags of o on fs, with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Runs, "runs", 500, "runs to create")
	fs.IntVar(&o.Concurrency, "concurrency", 100, "concurrent clients, each creating a run and following its stream")
	fs.IntVar(&o.Turns, "turns", 3, "model turns that call tools, before the final answer")
	fs.IntVar(&o.ToolCalls, "tool-calls", 1, "tool calls per turn")
	fs.DurationVar(&o.ModelLatency, "model-latency", 20*time.Millisecond, "scripted model latency per turn")
	fs.StringVar(&o.Tool, "tool", "shell", "tool the turns call: shell (runs --tool-command in the sandbox) or none")
	fs.StringVar(&o.ToolCommand, "tool-command", "true", "command the shell tool runs")
	fs.StringVar(&o.JSONPath, "json", "", "write the JSON report here (default: stdout)")
	fs.StringVar(&o.MarkdownPath, "markdown", "", "replace the xbot bench section of this markdown file with the table")
	fs.DurationVar(&o.Timeout, "timeout", 15*time.Minute, "give up after this long")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole process during the load to this file (go tool pprof)")
}

// Validate reports every problem of o, under the names of its flags.
func (o Options) Validate() error {
	var errs []error
	if o.Runs < 1 || o.Concurrency < 1 || o.Turns < 0 || o.ToolCalls < 0 || o.ModelLatency < 0 {
		errs = append(errs, errors.New("--runs and --concurrency must be >= 1; --turns, --tool-calls, --model-latency >= 0"))
	}
	if o.Tool != "shell" && o.Tool != "none" {
		errs = append(errs, fmt.Errorf("--tool %q: want shell or none", o.Tool))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: want > 0", o.Timeout))
	}
	return errors.Join(errs...)
}
