package clickhouse

import (
	"errors"
	"strings"
)

// SplitStatements splits SQL text into statements at each ';' that is not
// inside a quoted string or identifier ('…', "…", `…`, with backslash or
// doubled-quote escapes) or a comment (-- to end of line, /* … */). Comments
// stay in the text they are in: one before a statement belongs to it, one
// after the last statement to the last; pieces holding only whitespace and
// comments are dropped. The native protocol runs one statement
// per query, so a migration file with several must be split.
func SplitStatements(sql string) ([]string, error) {
	var (
		out   []string
		start int
	)
	for i := 0; i < len(sql); i++ {
		end, err := skipQuotedOrComment(sql, i)
		if err != nil {
			return nil, err
		}
		if end > i {
			i = end - 1
			continue
		}
		if sql[i] == ';' {
			out = appendStatement(out, sql[start:i])
			start = i + 1
		}
	}
	return appendStatement(out, sql[start:]), nil
}

// skipQuotedOrComment returns the index just past the quoted string or
// comment starting at i, or i when none starts there.
func skipQuotedOrComment(sql string, i int) (int, error) {
	switch {
	case sql[i] == '\'' || sql[i] == '"' || sql[i] == '`':
		return skipQuoted(sql, i)
	case strings.HasPrefix(sql[i:], "--"):
		if nl := strings.IndexByte(sql[i:], '\n'); nl >= 0 {
			return i + nl + 1, nil
		}
		return len(sql), nil
	case strings.HasPrefix(sql[i:], "/*"):
		if end := strings.Index(sql[i+2:], "*/"); end >= 0 {
			return i + 2 + end + 2, nil
		}
		return 0, errors.New("split statements: unterminated /* comment")
	}
	return i, nil
}

// skipQuoted returns the index just past the quoted text opened at i.
func skipQuoted(sql string, i int) (int, error) {
	q := sql[i]
	for j := i + 1; j < len(sql); j++ {
		switch sql[j] {
		case '\\':
			j++ // the escaped character, whatever it is
		case q:
			if j+1 < len(sql) && sql[j+1] == q {
				j++ // doubled quote: an escaped quote
				continue
			}
			return j + 1, nil
		}
	}
	return 0, errors.New("split statements: unterminated quoted text")
}

// appendStatement appends stmt, trimmed, unless it holds no SQL.
func appendStatement(out []string, stmt string) []string {
	stmt = strings.TrimSpace(stmt)
	if onlyComments(stmt) {
		return out
	}
	return append(out, stmt)
}

// onlyComments reports whether s holds nothing but whitespace and comments.
func onlyComments(s string) bool {
	for i := 0; i < len(s); i++ {
		if end, err := skipQuotedOrComment(s, i); err == nil && end > i && s[i] != '\'' && s[i] != '"' && s[i] != '`' {
			i = end - 1
			continue
		}
		if !strings.ContainsRune(" \t\r\n", rune(s[i])) {
			return false
		}
	}
	return true
}
