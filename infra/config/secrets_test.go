package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

func TestParseSecretsNeverQuotesAValue(t *testing.T) {
	t.Parallel()
	got, err := config.ParseSecrets(" GITHUB_TOKEN=ghp_abc=def , X=1,")
	if err != nil || got["GITHUB_TOKEN"] != "ghp_abc=def" || got["X"] != "1" || len(got) != 2 {
		t.Fatalf("ParseSecrets = %v, %v", got, err)
	}
	const hidden = "hunter2-value"
	for _, bad := range []string{"novalue" + hidden, "1BAD=" + hidden, "A=" + hidden + ",A=" + hidden, "A="} {
		_, err := config.ParseSecrets(bad)
		if err == nil || strings.Contains(err.Error(), hidden) {
			t.Errorf("ParseSecrets(%q) = %v, want an error without the value", bad, err)
		}
	}
}

func TestReadSecretsFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(path, []byte("# MCP\nGITHUB_TOKEN='a,b'\nexport OTHER=\"x y\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := config.ReadSecretsFile(path)
	if err != nil || got["GITHUB_TOKEN"] != "a,b" || got["OTHER"] != "x y" {
		t.Fatalf("ReadSecretsFile = %v, %v", got, err)
	}
}
