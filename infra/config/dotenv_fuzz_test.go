package config

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fuzzSecret marks a value in fuzzed input; '#' cannot be part of a name,
// so an error that contains it quoted a value.
const fuzzSecret = "s3cr#t"

var dotenvErrPrefix = regexp.MustCompile(`^/cfg/\.env:([0-9]+): `)

// FuzzDotenv: parseDotenv never panics. An error names file:line of a line
// of the input and never quotes a value. What it accepts has valid names in
// line order, and written back double quoted it parses to the same values.
func FuzzDotenv(f *testing.F) {
	for _, s := range []string{"", "XBOT_LLM_MODEL=gpt-4o\n", "export A=1 # c\nB='x y'\n",
		"A=\"a\\\"b\\\\c\\nd\" # n\r\nB=\n", "A=\"line1\nline2\"\nB=2", "A=\"" + fuzzSecret, "A='" + fuzzSecret + "\n",
		"A=\"x\" " + fuzzSecret, "1A=" + fuzzSecret, "A " + fuzzSecret, "A=a\tb\t# c", "A=\"\\$\\`\\q\"", "export\tA=1", "exportA=1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "/cfg/.env"
		vars, err := parseDotenv(path, data)
		lines := strings.Count(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") + 1
		if err != nil {
			m := dotenvErrPrefix.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error %q does not start with file:line", err)
			}
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > lines {
				t.Fatalf("error %q names a line outside 1..%d", err, lines)
			}
			if strings.Contains(err.Error(), fuzzSecret) {
				t.Fatalf("error %q quotes the input", err)
			}
			return
		}
		last := 0
		for _, v := range vars {
			if !validEnvName(v.name) || v.line <= last || v.line > lines {
				t.Fatalf("parsed %+v after line %d of %d", v, last, lines)
			}
			last = v.line
		}
		again, err := parseDotenv(path, renderDotenv(vars))
		if err != nil || len(again) != len(vars) {
			t.Fatalf("written back: %v, %d of %d variables", err, len(again), len(vars))
		}
		for i, v := range vars {
			if again[i].name != v.name || again[i].value != v.value {
				t.Fatalf("written back %q=%q, read %q=%q", v.name, v.value, again[i].name, again[i].value)
			}
		}
	})
}

// renderDotenv writes vars one a line, every value double quoted.
func renderDotenv(vars []dotenvVar) []byte {
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	var b strings.Builder
	for _, v := range vars {
		b.WriteString(v.name + `="` + esc.Replace(v.value) + "\"\n")
	}
	return []byte(b.String())
}
