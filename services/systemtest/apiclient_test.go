package systemtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The tests reach the API through its typed client (services/api/client).
// A test about HTTP itself — a status, a header, a body the typed client
// cannot send — uses send, the one raw request helper.

// apiClient is a client of st's API that sends tok, over hc (nil: the
// default HTTP client).
func apiClient(t testing.TB, st *stack.Stack, tok string, hc *http.Client) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: "http://" + st.Addr(), Token: tok, HTTP: hc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// apiOf is st's API as tenant acme (token).
func apiOf(t testing.TB, st *stack.Stack) *client.Client {
	t.Helper()
	return apiClient(t, st, token, nil)
}

// isProblem reports whether err is an error answer with status and code.
func isProblem(err error, status int, code string) bool {
	p, ok := errors.AsType[*client.Problem](err)
	return ok && p.Status == status && p.Code == code
}

// refused is err unless it is a rejection (*client.RejectedError): the
// command helpers return a rejected command's answer, which the tests check.
func refused(err error) error {
	if _, ok := errors.AsType[*client.RejectedError](err); ok {
		return nil
	}
	return err
}

// create queues a CreateRun of agent with content under key as acme; an
// error answer fails the test.
func create(t testing.TB, st *stack.Stack, agent, content, key string) client.CommandResult {
	t.Helper()
	return createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: agent, Input: client.UserInput{Content: content}}, key)
}

// createRun queues req with c under key (empty: none); an error answer
// fails the test.
func createRun(t testing.TB, c *client.Client, req client.CreateRunRequest, key string) client.CommandResult {
	t.Helper()
	res, err := c.CreateRun(t.Context(), req, client.CommandOptions{IdempotencyKey: key})
	if refused(err) != nil || res.RunID == "" {
		t.Fatalf("create %s: %+v %v", req.AgentID, res, err)
	}
	return res
}

// input queues an AppendUserInput of intent (steer, clarification,
// follow_up) as acme under key (empty: none); an error answer fails the
// test.
func input(t testing.TB, st *stack.Stack, runID, intent, content, key string) client.CommandResult {
	t.Helper()
	res, err := apiOf(t, st).AppendInput(t.Context(), runID, client.AppendInputRequest{Intent: intent, Content: content},
		client.CommandOptions{IdempotencyKey: key})
	if refused(err) != nil {
		t.Fatalf("%s on %s: %v", intent, runID, err)
	}
	return res
}

// cancelRun queues a CancelRun with reason as acme under key; an error
// answer fails the test.
func cancelRun(t testing.TB, st *stack.Stack, runID, reason, key string) client.CommandResult {
	t.Helper()
	res, err := apiOf(t, st).CancelRun(t.Context(), runID, reason, client.CommandOptions{IdempotencyKey: key})
	if refused(err) != nil {
		t.Fatalf("cancel %s: %v", runID, err)
	}
	return res
}

// waitStatus waits until acme reads run runID in status want and returns it.
func waitStatus(t testing.TB, st *stack.Stack, runID, want string, within time.Duration) client.Run {
	t.Helper()
	return waitStatusOf(t, apiOf(t, st), runID, want, within)
}

// waitStatusOf is waitStatus through c.
func waitStatusOf(t testing.TB, c *client.Client, runID, want string, within time.Duration) client.Run {
	t.Helper()
	var run client.Run
	eventually.Succeeds(t, within, "run "+runID+" "+want, func() error {
		r, err := c.GetRun(t.Context(), runID)
		if err != nil {
			return err
		}
		if run = r; r.Status != want {
			return fmt.Errorf("status %s", r.Status)
		}
		return nil
	})
	return run
}

// getRun reads a run as acme; an error answer fails the test.
func getRun(t testing.TB, st *stack.Stack, runID string) client.Run {
	t.Helper()
	run, err := apiOf(t, st).GetRun(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// listEventsPage is the page size listEvents reads with: small, so that
// every log the tests read is paged.
const listEventsPage = 7

// listEvents reads every event of a run through the API.
func listEvents(t testing.TB, st *stack.Stack, runID string) []client.Event {
	t.Helper()
	var out []client.Event
	if err := apiOf(t, st).EventPages(t.Context(), runID, 0, listEventsPage, func(p client.EventPage) error {
		out = append(out, p.Events...)
		return nil
	}); err != nil {
		t.Fatalf("events of %s: %v", runID, err)
	}
	return out
}

// eventsOf is the run's events of type typ, in seq order.
func eventsOf(t testing.TB, st *stack.Stack, runID string, typ events.Type) []client.Event {
	t.Helper()
	var out []client.Event
	for _, ev := range listEvents(t, st, runID) {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// payloads is the payloads of the run's events whose payload type is T
// (events.ItemFailedPayload: the runtime.item.failed events), in seq order.
func payloads[T any](t testing.TB, st *stack.Stack, runID string) []T {
	t.Helper()
	var out []T
	for _, ev := range eventsOf(t, st, runID, eventTypeOf[T](t)) {
		out = append(out, payloadOf[T](t, ev))
	}
	return out
}

// eventTypeOf is the event type whose payload type is T.
func eventTypeOf[T any](t testing.TB) events.Type {
	t.Helper()
	for _, typ := range events.Catalog() {
		if p, _ := events.NewPayload(typ); p != nil {
			if _, ok := p.(*T); ok {
				return typ
			}
		}
	}
	t.Fatalf("%T is the payload of no event type", new(T))
	return ""
}

// payloadOf decodes ev's payload; a payload that is not a T fails the test.
func payloadOf[T any](t testing.TB, ev client.Event) T {
	t.Helper()
	p, err := client.DecodePayload[T](ev)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// dataOf decodes an item event's Data as a T (events.ToolResultData, …);
// absent data is a zero T.
func dataOf[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var out T
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("item data %s: %v", raw, err)
		}
	}
	return out
}

// typeCounts counts events by type.
func typeCounts(evs []client.Event) map[events.Type]int {
	out := map[events.Type]int{}
	for _, ev := range evs {
		out[ev.Type]++
	}
	return out
}

// countType counts the run's events of one type.
func countType(t testing.TB, st *stack.Stack, runID string, typ events.Type) int {
	t.Helper()
	return typeCounts(listEvents(t, st, runID))[typ]
}

// answer is an HTTP answer; the body of an SSE stream is not read.
type answer struct {
	status int
	hdr    http.Header
	body   string
}

// problem is the answer read as a problem document, with its status.
func (a answer) problem() *client.Problem {
	p := &client.Problem{}
	_ = json.Unmarshal([]byte(a.body), p)
	p.Status = a.status
	return p
}

// code is the answer's problem code ("" when it is not a problem).
func (a answer) code() string { return a.problem().Code }

// err is the answer as the typed client reports it: nil for a 2xx answer,
// else a *client.Problem.
func (a answer) err() error {
	if a.status >= 200 && a.status <= 299 {
		return nil
	}
	return a.problem()
}

// send sends a raw request to st's API with tok over hc; a transport error
// fails the test. body is nil or "" (none), a string (sent as it is) or a
// value sent as JSON; hdr is header name, value pairs.
func send(t testing.TB, hc *http.Client, st *stack.Stack, method, path, tok string, body any, hdr ...string) answer {
	t.Helper()
	ans, err := do(hc, st, method, path, tok, body, hdr...)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
	}
	return ans
}

// do is send for callers that count transport errors instead of failing.
func do(hc *http.Client, st *stack.Stack, method, path, tok string, body any, hdr ...string) (answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.New(client.Config{BaseURL: "http://" + st.Addr(), Token: tok, HTTP: hc})
	if err != nil {
		return answer{}, err
	}
	if body == "" {
		body = nil
	}
	resp, err := c.Send(ctx, method, path, body, hdr...)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return answer{status: resp.StatusCode, hdr: resp.Header}, nil
	}
	raw, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, hdr: resp.Header, body: string(raw)}, err
}

// runUntil creates a run of agent with content under key as acme and waits
// until it is in status; it returns the run's id.
func runUntil(t testing.TB, st *stack.Stack, agent, content, key, status string, within time.Duration) string {
	t.Helper()
	runID := create(t, st, agent, content, key).RunID
	waitStatus(t, st, runID, status, within)
	return runID
}
