package config

import (
	"fmt"
	"io"
	"net/url"
	"slices"
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
	for _, v := range append(r.Values(), r.scopedValues()...) {
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

// scopedValues are the provider settings, by name.
func (r *Resolved) scopedValues() []Value {
	out := make([]Value, 0, len(r.scoped))
	for _, v := range r.scoped {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b Value) int { return strings.Compare(a.Key.Name, b.Key.Name) })
	return out
}

// displayValue is the value as Explain shows it.
func displayValue(v Value) string {
	switch {
	case !v.IsSet():
		return Unset
	case v.Key.Secret:
		return Redacted
	}
	return quoteIfOdd(redactURL(v.Value))
}

// redactedPart replaces the userinfo and the query of a URL in Explain
// output: both often carry credentials (https://user:key@host/v1?key=…).
const redactedPart = "redacted"

// redactURL returns s with the userinfo, query and fragment of a URL
// replaced by redactedPart; a value that is not a URL is returned as is,
// one that looks like a URL but does not parse is Redacted whole.
func redactURL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return Redacted
	}
	if u.User != nil {
		u.User = url.User(redactedPart)
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = redactedPart, false
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = redactedPart, ""
	}
	return u.String()
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
