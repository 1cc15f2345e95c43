package api_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/services/api"
)

// route names an operation in a client method's doc comment: "(GET
// /v1/runs/{runId})", possibly wrapped over two comment lines.
var route = regexp.MustCompile(`\b(GET|POST|DELETE|PUT|PATCH)\s+(/[A-Za-z0-9_{}/.-]+)`)

// TestTheClientCoversEveryOperation: every operation of the OpenAPI
// document has a method of services/api/client whose doc comment names it,
// and no method names an operation the API does not have.
func TestTheClientCoversEveryOperation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api.EnableProjectorLag(func(context.Context) ([]api.ProjectorLag, error) { return nil, nil })
	ops := map[string]bool{}
	for path, item := range e.api.OpenAPI().Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "DELETE": item.Delete,
			"PUT": item.Put, "PATCH": item.Patch} {
			if op != nil {
				ops[method+" "+path] = true
			}
		}
	}
	named := clientRoutes(t)
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		if len(named[op]) == 0 {
			t.Errorf("no client method names %s in its doc comment", op)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(named)) {
		if !ops[r] {
			t.Errorf("client methods %v name %s, which the API does not serve", named[r], r)
		}
	}
}

// clientRoutes maps each route named in a doc comment of a method of
// *client.Client to the methods naming it.
func clientRoutes(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join("client", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Doc == nil || !fn.Name.IsExported() {
				continue
			}
			for _, m := range route.FindAllStringSubmatch(fn.Doc.Text(), -1) {
				out[m[1]+" "+m[2]] = append(out[m[1]+" "+m[2]], fn.Name.Name)
			}
		}
	}
	return out
}
