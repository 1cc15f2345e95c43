package loadtool

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// write puts the JSON report in JSONPath or on stdout, the table on stderr
// and in MarkdownPath.
func (o Options) write(rep *Report) error {
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
	return replaceSection(o.MarkdownPath, table)
}

// replaceSection puts section in place of the one between the markers in
// path, or appends it when the file has none (creating the file if needed).
func replaceSection(path, section string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(path, []byte(spliceSection(string(old), section)), 0o644) //nolint:gosec // a docs file
}

func spliceSection(doc, section string) string {
	return spliceBetween(doc, section, sectionBegin, sectionEnd)
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
