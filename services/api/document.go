package api

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
)

// Spec names one of the OpenAPI documents the API serves.
type Spec string

// The documents the API serves.
const (
	// OpenAPI31 is /openapi.json.
	OpenAPI31 Spec = "3.1"
	// OpenAPI30 is /openapi-3.0.json, the same API downgraded for tools that
	// read only 3.0.
	OpenAPI30 Spec = "3.0"
)

// path is where the API serves spec.
func (s Spec) path() (string, error) {
	switch s {
	case OpenAPI31:
		return "/openapi.json", nil
	case OpenAPI30:
		return "/openapi-3.0.json", nil
	}
	return "", fmt.Errorf("api: no OpenAPI document %q (3.1 or 3.0)", s)
}

// Document returns the OpenAPI document spec exactly as a running API of
// this build serves it, version in its info: it builds an API and asks its
// handler for the document. That API reaches nothing (no Kafka, no
// Postgres, no token a client knows) and serves no other request; the
// document does not depend on how an API is wired (EnableStreams and the
// other Enable methods change answers, not routes).
func Document(spec Spec, version string) ([]byte, error) {
	path, err := spec.path()
	if err != nil {
		return nil, err
	}
	token := make([]byte, 32)
	_, _ = rand.Read(token) // crypto/rand.Read never fails
	a, err := New(Config{Tokens: map[string]string{fmt.Sprintf("%x", token): "document"}, Version: version},
		unreachable{}, unreachable{}, nil, zap.NewNop())
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, path, nil)
	if err != nil {
		return nil, fmt.Errorf("api: document request: %w", err)
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("api: %s answered %d", path, rec.Code)
	}
	return rec.Body.Bytes(), nil
}

// unreachable is the store and command sender of the API Document builds;
// no handler of that API ever runs, so none of its methods is called.
type unreachable struct {
	Store
}

func (unreachable) Send(context.Context, commands.Envelope) error {
	return fmt.Errorf("api: the API of Document sends no command")
}
