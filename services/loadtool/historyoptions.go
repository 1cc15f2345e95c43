package loadtool

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// HistoryOptions are the flags of `xbot bench --history`: the mode that
// measures how the costs of a takeover, of follow-ups and of a stream grow
// with the history behind them. The JSON and markdown paths and the timeout
// are Options'.
type HistoryOptions struct {
	// Sizes are the histories to measure, in events, growing: the history is
	// built up to the first, measured, grown to the next, … Empty: the mode
	// is off.
	Sizes []int64
	// Reps is how many times each figure is measured; the report gives the
	// median (>= 1).
	Reps int
	// Session is how many runs the long session has when its follow-up is
	// first timed (>= 2).
	Session int
	// Window bounds the history's runs in flight while it grows (>= 1).
	Window int
	// Child makes the process one the mode measures (RunHistoryChild),
	// reading its spec from stdin; internal.
	Child bool
	// ChildCommand starts a process the mode measures. Default: this
	// binary, `bench --history-child`.
	ChildCommand []string
}

// BindFlags defines the flags of h on fs, with their defaults.
func (h *HistoryOptions) BindFlags(fs *flag.FlagSet) {
	fs.Func("history", "measure costs against history instead of a load: sizes in events, growing, comma-separated "+
		"(10000,100000,1000000 or 10k,100k,1M)", func(s string) error {
		sizes, err := parseSizes(s)
		h.Sizes = sizes
		return err
	})
	fs.IntVar(&h.Reps, "history-reps", 3, "with --history: repetitions of each figure (the median is reported)")
	fs.IntVar(&h.Session, "history-session", 100, "with --history: runs of the long session whose follow-up is timed")
	fs.IntVar(&h.Window, "history-window", 512, "with --history: runs in flight while the history grows")
	fs.BoolVar(&h.Child, "history-child", false, "internal: run as a process --history measures (spec on stdin)")
}

// parseSizes reads "10000,100000" or "10k,100k,1M".
func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mult := int64(1)
		switch {
		case strings.HasSuffix(f, "k"):
			f, mult = strings.TrimSuffix(f, "k"), 1_000
		case strings.HasSuffix(f, "M"):
			f, mult = strings.TrimSuffix(f, "M"), 1_000_000
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--history %q: want positive sizes in events, e.g. 10k,100k,1M", s)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

// Enabled reports whether the history mode was asked for.
func (h HistoryOptions) Enabled() bool { return len(h.Sizes) > 0 }

// Validate reports every problem of h, under the names of its flags.
func (h HistoryOptions) Validate() error {
	var errs []error
	for i := 1; i < len(h.Sizes); i++ {
		if h.Sizes[i] <= h.Sizes[i-1] {
			errs = append(errs, errors.New("--history: sizes must grow"))
			break
		}
	}
	if h.Reps < 1 || h.Window < 1 {
		errs = append(errs, errors.New("--history-reps and --history-window must be >= 1"))
	}
	if h.Session < 2 {
		errs = append(errs, errors.New("--history-session must be >= 2"))
	}
	return errors.Join(errs...)
}

func (h HistoryOptions) childCommand() ([]string, error) {
	if len(h.ChildCommand) > 0 {
		return h.ChildCommand, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("history: the measured processes are this binary: %w", err)
	}
	return []string{self, "bench", "--history-child"}, nil
}
