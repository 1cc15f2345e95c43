package config

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

var tomlOrigin = regexp.MustCompile(`:[0-9]+$`)

// FuzzTOML: readTOML never panics. An error starts with the file's path and
// never quotes the value of a secret key (secret, when not empty, is the
// value of pg_dsn on line 1 before doc). What it accepts holds registered
// keys only, each with a file:line origin, and the values written back as
// TOML strings read back the same.
func FuzzTOML(f *testing.F) {
	for _, s := range [][2]string{{"", ""}, {"", "llm_model = \"m\"\nkafka_partitions = 3\n"},
		{"", "kafka_brokers = [\"a:1\", \"b:2\"]\nlog_level = 'debug'\n"}, {"", "bogus = 1\n[table]\nx = 1\n"},
		{"", "api_addr = 1.5e3\ndata_dir = true\nexecutor_id = 1979-05-27T07:32:00Z\n"}, {"", "llm_model = [[1]]"},
		{"", "llm_model = {a = 1}"}, {"", "llm_model = \"unterminated"}, {"\"", ""}, {"x\" junk", "llm_model = 1"},
		{"\\q\"", ""}, {"abc\"", "pg_dsn = 2"}, {"abc\"", "llm_model = \"\"\"\nmulti\n"}} {
		f.Add(s[0], s[1])
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, secret, doc string) {
		path := filepath.Join(dir, "config.toml")
		src := doc
		if secret != "" {
			src = "pg_dsn = \"" + fuzzSecret + secret + "\n" + doc
		}
		got := mustReadTOML(t, path, src, func(err error) {
			leak := secret != "" && !strings.Contains(doc, fuzzSecret) && strings.Contains(err.Error(), fuzzSecret)
			if !strings.HasPrefix(err.Error(), path+":") || leak {
				t.Fatalf("error %q: want %s: first and no secret value", err, path)
			}
		})
		if got == nil {
			return
		}
		values := make(map[string]string, len(got))
		for name, e := range got {
			if _, ok := byName[name]; !ok || !strings.HasPrefix(e.origin, path) || !tomlOrigin.MatchString(e.origin) {
				t.Fatalf("accepted key %q with origin %q", name, e.origin)
			}
			values[name] = e.value
		}
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(values); err != nil {
			t.Fatalf("encode %q: %v", values, err)
		}
		again := mustReadTOML(t, path, buf.String(), func(err error) { t.Fatalf("written back %q: %v", buf.String(), err) })
		for name, v := range values {
			if again[name].value != v {
				t.Fatalf("%s written back as %q, read %q", name, v, again[name].value)
			}
		}
	})
}

// mustReadTOML writes src to path and reads it; on an error it calls
// refused and returns nil.
func mustReadTOML(t *testing.T, path, src string, refused func(error)) map[string]entry {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readTOML(path, mustScopes(nil))
	if err != nil {
		refused(err)
		return nil
	}
	if got == nil {
		got = map[string]entry{}
	}
	return got
}
