package main

import (
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/stack"
)

// TestStreamAppearWaitSetting: api_stream_appear_wait reaches the stack's
// options, 2s by default; zero or a negative wait is refused by name.
func TestStreamAppearWaitSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags []string
		want  time.Duration
		bad   bool
	}{
		{nil, 2 * time.Second, false},
		{[]string{"--api-stream-appear-wait", "750ms"}, 750 * time.Millisecond, false},
		{[]string{"--api-stream-appear-wait", "0s"}, 0, true},
		{[]string{"--api-stream-appear-wait", "-1s"}, 0, true},
	} {
		s, err := load("api", append([]string{"--log-level", "error"}, tc.flags...), "json")
		if err != nil {
			t.Fatal(err)
		}
		var opts stack.Options
		err = s.apiAccess(&opts)
		switch {
		case tc.bad && (err == nil || !strings.Contains(err.Error(), "api_stream_appear_wait")):
			t.Errorf("%v: %v, want an error naming api_stream_appear_wait", tc.flags, err)
		case !tc.bad && (err != nil || opts.StreamAppearWait != tc.want):
			t.Errorf("%v: wait %s, %v; want %s", tc.flags, opts.StreamAppearWait, err, tc.want)
		}
	}
}
