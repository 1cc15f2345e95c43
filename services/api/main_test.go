package api_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
)

// The read-model endpoint tests run against a real Postgres (pgtest starts
// one server per test binary, lazily, only if a test asks for a database).
func TestMain(m *testing.M) { pgtest.Main(m) }
