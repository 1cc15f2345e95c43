package config_test

import (
	"bytes"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	t.Parallel()
	const dsn = "postgres://xbot:s3cr3t-pw@db:5432/xbot"
	const apiKey = "sk-live-abcdef"
	w := newWorld(t)
	w.src.Flags = map[string]string{"api_addr": ":7000"}
	w.src.Env["XBOT_PG_DSN"] = dsn
	writeFile(t, w.dotenvPath(), "XBOT_LLM_API_KEY="+apiKey+"\n")
	writeFile(t, w.tomlPath(), "kafka_brokers = \"k:9092\"\n")
	var out bytes.Buffer
	if err := mustLoad(t, w.src).Explain(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, secret := range []string{dsn, "s3cr3t-pw", apiKey} {
		if strings.Contains(text, secret) {
			t.Fatalf("explain output leaks %q:\n%s", secret, text)
		}
	}
	wantRows := map[string][]string{
		"api_addr":      {":7000", "flag", "XBOT_API_ADDR", "--api-addr"},
		"pg_dsn":        {"***redacted***", "env", "XBOT_PG_DSN"},
		"llm_api_key":   {"***redacted***", "dotenv", "XBOT_LLM_API_KEY", w.dotenvPath() + ":1"},
		"kafka_brokers": {"k:9092", "config_toml", "XBOT_KAFKA_BROKERS", w.tomlPath() + ":1"},
		"api_tokens":    {"(unset)", "default", "XBOT_API_TOKENS"},
		"data_dir":      {"(unset)", "default", "XBOT_DATA_DIR"},
		"log_level":     {"info", "default", "XBOT_LOG_LEVEL"},
	}
	rows := explainRows(text)
	for key, want := range wantRows {
		got, ok := rows[key]
		if !ok {
			t.Errorf("no row for %s:\n%s", key, text)
			continue
		}
		if len(got) < len(want) || strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
			t.Errorf("row %s = %v, want prefix %v", key, got, want)
		}
	}
	assertSortedRows(t, text)
}

// explainRows maps each key to the remaining columns of its row.
func explainRows(text string) map[string][]string {
	rows := make(map[string][]string)
	for _, line := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
		f := strings.Fields(line)
		rows[f[0]] = f[1:]
	}
	return rows
}

func assertSortedRows(t *testing.T, text string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if !strings.HasPrefix(lines[0], "KEY") {
		t.Errorf("first line %q is not the header", lines[0])
	}
	prev := ""
	for _, line := range lines[1:] {
		key := strings.Fields(line)[0]
		if key <= prev {
			t.Errorf("rows not sorted: %s after %s", key, prev)
		}
		prev = key
	}
}

func TestExplainRedactsURLCredentials(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ in, want string }{
		"userinfo and query": {"https://user:sk-url-secret@llm.example:8443/v1?api-key=sk-q-secret#frag",
			"https://redacted@llm.example:8443/v1?redacted#redacted"},
		"user only":  {"https://sk-user-secret@llm.example/v1", "https://redacted@llm.example/v1"},
		"plain":      {"https://llm.example/v1", "https://llm.example/v1"},
		"unparsable": {"https://u:sk-bad%zz@llm.example/v1", "***redacted***"},
	}
	for name, tc := range cases {
		w := newWorld(t)
		w.src.Env["XBOT_LLM_BASE_URL"] = tc.in
		var out bytes.Buffer
		if err := mustLoad(t, w.src).Explain(&out); err != nil {
			t.Fatal(err)
		}
		got := explainRows(out.String())["llm_base_url"]
		if len(got) == 0 || got[0] != tc.want {
			t.Errorf("%s: llm_base_url shown as %v, want %s", name, got, tc.want)
		}
		if strings.Contains(out.String(), "-secret") { // the values' secrets, not key names such as api_jwt_hs256_secret
			t.Errorf("%s: explain output leaks a credential:\n%s", name, out.String())
		}
	}
}
