//go:build clients

package clientcheck_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api"
)

// toolTimeout bounds one generator or compiler run: seconds when the tools
// are cached, a few minutes when go first builds oapi-codegen on a loaded
// machine.
const toolTimeout = 10 * time.Minute

// goModule is the import path of goclient's module.
const goModule = "github.com/xbot-runtime/xbot/services/api/clientcheck/goclient"

// documents are the served documents, by the name the generated clients get.
func documents(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, spec := range map[string]api.Spec{"xbotapi": api.OpenAPI31, "xbotapi30": api.OpenAPI30} {
		doc, err := api.Document(spec, "clientcheck")
		if err != nil {
			t.Fatal(err)
		}
		out[name] = doc
	}
	return out
}

// TestGeneratedClientsCompile generates the Go and the TypeScript client of
// both documents and compiles each with its usage program.
func TestGeneratedClientsCompile(t *testing.T) {
	docs := documents(t)
	t.Run("Go", func(t *testing.T) { goClients(t, docs) })
	t.Run("TypeScript", func(t *testing.T) { tsClients(t, docs) })
}

// goClients generates package <name> of each document with oapi-codegen in a
// copy of goclient, a copy of usage for each, and builds and vets them all.
func goClients(t *testing.T, docs map[string][]byte) {
	if _, err := exec.LookPath("go"); err != nil {
		unavailable(t, "go is not on PATH")
	}
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		copyFile(t, filepath.Join("goclient", f), filepath.Join(dir, f))
	}
	usage, err := os.ReadFile(filepath.Join("goclient", "usage", "usage.go"))
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range docs {
		spec := filepath.Join(dir, name+".json")
		writeFile(t, spec, doc)
		if err := os.MkdirAll(filepath.Join(dir, name), 0o750); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "go", "tool", "oapi-codegen", "-generate", "types,client", "-package", name,
			"-o", filepath.Join(name, "client_gen.go"), spec)
		pkg := "usage" + strings.TrimPrefix(name, "xbotapi")
		src := strings.NewReplacer(goModule+"/xbotapi\"", goModule+"/"+name+"\"", "xbotapi.", name+".",
			"package usage", "package "+pkg).Replace(string(usage))
		writeFile(t, filepath.Join(dir, pkg, "usage.go"), []byte(src))
		keep(t, "go/"+name+"/client_gen.go", filepath.Join(dir, name, "client_gen.go"))
	}
	// The copies are a module of their own, or the repository's ./... would
	// take them (under artifacts/) for packages of its module.
	keep(t, "go/go.mod", filepath.Join(dir, "go.mod"))
	keep(t, "go/go.sum", filepath.Join(dir, "go.sum"))
	run(t, dir, "go", "build", "./...")
	run(t, dir, "go", "vet", "./...")
	report(t, filepath.Join(dir, "xbotapi", "client_gen.go"),
		`(?m)^type (Problem|ProblemCode|EventEnvelope|\w+Event|\w+Payload) `)
}

// report logs which of the generated names match re.
func report(t *testing.T, file, re string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(string(b), -1) {
		names = append(names, m[1])
	}
	t.Logf("%s: %d bytes; %s", filepath.Base(file), len(b), strings.Join(names, " "))
}

// run runs a command in dir and fails t with its output if it fails.
func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off") // the copy is a module of its own
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "dial tcp") || strings.Contains(string(out), "proxy.golang.org") {
			unavailable(t, "%s %s: cannot fetch the pinned modules:\n%s", name, strings.Join(args, " "), out)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// keep copies a generated file to $XBOT_ARTIFACTS/clients (default
// artifacts/clients at the repository's root), for a reader of CI's output.
func keep(t *testing.T, name, from string) {
	t.Helper()
	base := os.Getenv("XBOT_ARTIFACTS")
	if base == "" {
		base = filepath.Join("..", "..", "..", "artifacts")
	}
	to := filepath.Join(base, "clients", filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(to), 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, from, to)
}

// unavailable skips the test, or fails it in CI (CI=true).
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("clients test: "+format, args...)
	}
	t.Skipf("clients test: "+format+" (with CI=true this is a failure)", args...)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, b)
}

func writeFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
