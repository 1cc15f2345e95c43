package config

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Redacted replaces the value of a secret key that is set in Explain output.
const Redacted = "***redacted***"

// Unset is shown by Explain for a key with no value.
const Unset = "(unset)"

// Explain writes a table of every key, sorted by name: the value (secrets as
// Redacted, empty values as Unset), the layer it came from, the key's
// environment variable and the precise origin (flag, variable or file:line).
// Secret values never appear in the output.
func (r *Resolved) Explain(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if _, err := fmt.Fprintln(tw, "KEY\tVALUE\tLAYER\tVARIABLE\tORIGIN"); err != nil {
		return fmt.Errorf("explain config: %w", err)
	}
	for _, v := range r.Values() {
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n",
			v.Key.Name, displayValue(v), v.Layer, v.Key.Env(), displayOrigin(v.Origin))
		if err != nil {
			return fmt.Errorf("explain config: %w", err)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("explain config: %w", err)
	}
	return nil
}

// displayValue is the value as Explain shows it.
func displayValue(v Value) string {
	switch {
	case !v.IsSet():
		return Unset
	case v.Key.Secret:
		return Redacted
	}
	return quoteIfOdd(v.Value)
}

// displayOrigin keeps the origin column free of tabs and newlines, which a
// file path could contain.
func displayOrigin(origin string) string { return quoteIfOdd(origin) }

// quoteIfOdd quotes s when it holds whitespace or unprintable characters
// that would make the table ambiguous.
func quoteIfOdd(s string) string {
	if strings.ContainsAny(s, " \t\r\n") || strconv.Quote(s) != `"`+s+`"` {
		return strconv.Quote(s)
	}
	return s
}
