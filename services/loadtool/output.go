package loadtool

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// report is what the load tool writes: a JSON report and a markdown table.
type report interface {
	WriteJSON(io.Writer) error
	Markdown() string
}

// write puts the JSON report in JSONPath or on stdout, the table on stderr
// and in MarkdownPath, between the markers begin and end.
func (o Options) write(rep report, begin, end string) error {
	var w io.Writer = os.Stdout
	if o.JSONPath != "" {
		f, err := os.Create(o.JSONPath)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		w = f
	}
	if err := rep.WriteJSON(w); err != nil {
		return err
	}
	table := rep.Markdown()
	fmt.Fprint(os.Stderr, "\n"+table)
	if o.MarkdownPath == "" {
		return nil
	}
	old, err := os.ReadFile(o.MarkdownPath)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	doc := spliceBetween(string(old), table, begin, end)
	return os.WriteFile(o.MarkdownPath, []byte(doc), 0o644) //nolint:gosec // a docs file
}

// spliceBetween puts section in place of the part of doc from begin to end,
// or appends it when doc has no such part.
func spliceBetween(doc, section, begin, end string) string {
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i >= 0 && j > i {
		rest := strings.TrimPrefix(doc[j+len(end):], "\n")
		return doc[:i] + section + rest
	}
	if doc != "" && !strings.HasSuffix(doc, "\n\n") {
		doc = strings.TrimRight(doc, "\n") + "\n\n"
	}
	return doc + section
}
