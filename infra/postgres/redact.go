package postgres

import (
	"net/url"
	"regexp"
	"strings"
)

// redactedMark replaces a password in redacted DSNs and errors.
const redactedMark = "xxxxx"

// kvPassword matches password=... in a keyword/value DSN: a single-quoted
// value (with backslash escapes) or a bare value up to the next space.
var kvPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']\S*)`)

// urlUserinfo matches the userinfo password of a URL-form DSN that net/url
// cannot parse, e.g. postgres://user:pa/ss@host/db.
var urlUserinfo = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@]*:)(.*)(@[^@]*)$`)

// RedactDSN returns dsn with its password replaced by "xxxxx", both for the URL
// form (postgres://user:secret@host/db, and a password query parameter) and
// the keyword/value form (host=h password=secret). A DSN without a password
// is returned unchanged. The result is meant for logs and error messages.
func RedactDSN(dsn string) string {
	if !isURLDSN(dsn) {
		return kvPassword.ReplaceAllString(dsn, "${1}"+redactedMark)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return urlUserinfo.ReplaceAllString(dsn, "${1}"+redactedMark+"${3}")
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), redactedMark)
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", redactedMark)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// dsnSecrets returns, best effort, every spelling of the password of dsn
// (as written and decoded) for scrubbing error messages that may echo it.
func dsnSecrets(dsn string) []string {
	var out []string
	if !isURLDSN(dsn) {
		if m := kvPassword.FindStringSubmatch(dsn); m != nil {
			out = append(out, m[2], strings.Trim(m[2], "'"))
		}
		return out
	}
	if m := urlUserinfo.FindStringSubmatch(dsn); m != nil {
		out = append(out, m[2])
	}
	if u, err := url.Parse(dsn); err == nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
		if pw := u.Query().Get("password"); pw != "" {
			out = append(out, pw, url.QueryEscape(pw))
		}
	}
	return out
}

func isURLDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
