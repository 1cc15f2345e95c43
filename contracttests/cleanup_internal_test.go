package contracttests

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTheRuntimeSuiteInterruptsItsConversations: after its checks, the
// runtime client suite interrupts every conversation they started and drops
// what is queued there, whether the checks passed or not, so nothing of the
// suite stays running or paused on the target.
func TestTheRuntimeSuiteInterruptsItsConversations(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	interrupted := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v1/sessions/"), "/interrupt")
		var body struct{ CancelQueued bool }
		if raw, _ := io.ReadAll(r.Body); !ok || r.Method != http.MethodPost || json.Unmarshal(raw, &body) != nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		mu.Lock()
		interrupted[session] = body.CancelQueued
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"runId":"run_1","commandId":"cmd_1","outcome":"no_effect"}`)
	}))
	t.Cleanup(srv.Close)
	rs, suite := newRuntimeSuite(Target{BaseURL: srv.URL, Token: "tok", CheckTimeout: time.Minute})
	var started []string
	start := func(context.Context) error {
		rc, err := rs.conversation(AgentDemo)
		if err != nil {
			return err
		}
		started = append(started, rc.SessionKey())
		return errFailedOnPurpose
	}
	suite.Checks = []Check{{Name: "one", Run: start}, {Name: "two", Run: start}}
	suite.Run(context.Background(), io.Discard)
	mu.Lock()
	defer mu.Unlock()
	for _, id := range started {
		if cancelQueued, ok := interrupted[id]; !ok || !cancelQueued {
			t.Errorf("conversation %s was not interrupted with cancelQueued (interrupts %v)", id, interrupted)
		}
	}
	if len(started) != 2 || slices.Contains(started, "") {
		t.Fatalf("conversations %v", started)
	}
}

var errFailedOnPurpose = errors.New("failed on purpose")
