package api

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
)

// Encoding problems of a request. Go's JSON decoder would silently turn
// invalid UTF-8 and lone surrogate escapes into U+FFFD, and Postgres refuses
// NUL in text; such input is refused instead, before any handler runs.
var (
	errInvalidUTF8 = errors.New("is not valid UTF-8")
	errNUL         = errors.New("contains a NUL character")
	errSurrogate   = errors.New("contains a lone UTF-16 surrogate escape")
)

// checkEncoding is a middleware: a request whose path, query or body is not
// valid UTF-8 or holds a NUL (raw, or escaped as \u0000 in the body) is
// answered 422 invalid_encoding. Bodies larger than MaxBodyBytes are
// answered 413 payload_too_large. The body of a GET or HEAD is not read (no
// such operation takes one), so those answer neither. A top-level "$schema"
// member of a JSON object body is dropped (withoutSchemaMember).
func (a *API) checkEncoding(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loc, err := checkURL(r); err != nil {
			writeProblem(w, encodingProblem(loc, err))
			return
		}
		if r.Body == nil || r.Body == http.NoBody || r.Method == http.MethodGet || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, a.cfg.MaxBodyBytes+1))
		if err != nil {
			writeProblem(w, newProblem(http.StatusBadRequest, events.CodeValidationFailed, "the request body could not be read"))
			return
		}
		if int64(len(body)) > a.cfg.MaxBodyBytes {
			writeProblem(w, newProblem(http.StatusRequestEntityTooLarge, events.CodePayloadTooLarge, "request body too large"))
			return
		}
		if err := checkText(body); err != nil {
			writeProblem(w, encodingProblem("body", err))
			return
		}
		body = withoutSchemaMember(body)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		next.ServeHTTP(w, r)
	})
}

func encodingProblem(location string, err error) *Problem {
	return newProblem(http.StatusUnprocessableEntity, events.CodeInvalidEncoding, "the request is not valid UTF-8 text",
		invalid(location, err.Error(), nil).details[0])
}

// checkedHeaders are the headers handlers read ids from.
var checkedHeaders = []string{"Idempotency-Key", "Last-Event-ID", "X-Actor-Id"}

// checkURL checks the decoded path, every query parameter and the headers
// that carry ids.
func checkURL(r *http.Request) (string, error) {
	if err := checkString(r.URL.Path); err != nil {
		return "path", err
	}
	for _, h := range checkedHeaders {
		if err := checkString(r.Header.Get(h)); err != nil {
			return "header." + h, err
		}
	}
	// A malformed pair is dropped here as by every later reader of the query.
	q, _ := url.ParseQuery(r.URL.RawQuery)
	for name, vs := range q {
		if err := checkString(name); err != nil {
			return "query", err
		}
		for _, v := range vs {
			if err := checkString(v); err != nil {
				return "query." + name, err
			}
		}
	}
	return "", nil
}

func checkString(s string) error {
	switch {
	case !utf8.ValidString(s):
		return errInvalidUTF8
	case strings.IndexByte(s, 0) >= 0:
		return errNUL
	}
	return nil
}

// checkText checks a JSON body: valid UTF-8, no raw NUL, and no string
// escape that decodes to NUL or to a lone surrogate.
func checkText(b []byte) error {
	switch {
	case !utf8.Valid(b):
		return errInvalidUTF8
	case bytes.IndexByte(b, 0) >= 0:
		return errNUL
	}
	for i := bytes.Index(b, []byte(`\u`)); i >= 0; {
		skip, err := checkEscape(b, i)
		if err != nil {
			return err
		}
		next := bytes.Index(b[i+skip:], []byte(`\u`))
		if next < 0 {
			break
		}
		i += skip + next
	}
	return nil
}

// checkEscape checks the \u escape at b[i], if it is one (a backslash
// preceded by an odd number of backslashes is itself escaped), and returns
// how far to skip: past both halves of a surrogate pair.
func checkEscape(b []byte, i int) (int, error) {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	r, ok := hex4(b[i+2:])
	if n%2 == 1 || !ok {
		return 2, nil // escaped backslash, or malformed: the JSON decoder refuses it
	}
	switch {
	case r == 0:
		return 0, errNUL
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, errSurrogate
	case r >= 0xD800 && r < 0xDC00:
		rest := b[i+6:]
		if len(rest) < 6 || rest[0] != '\\' || rest[1] != 'u' {
			return 0, errSurrogate
		}
		if lo, ok := hex4(rest[2:]); !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, errSurrogate
		}
		return 12, nil
	}
	return 6, nil
}

// hex4 decodes four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
