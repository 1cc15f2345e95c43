package main

import (
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/stack"
)

// TestProjectorSettings: the projector keys reach the stack's options with
// their defaults; 0s turns the audit's linger off; a bound out of range is
// refused by name.
func TestProjectorSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags        []string
		linger       time.Duration
		batch, bytes int
		badKey       string
	}{
		{nil, 500 * time.Millisecond, 10_000, 8 << 20, ""},
		{[]string{"--clickhouse-projector-linger", "2s", "--projector-max-batch", "500", "--projector-max-batch-bytes", "65536"},
			2 * time.Second, 500, 65536, ""},
		{[]string{"--clickhouse-projector-linger", "0s"}, -1, 10_000, 8 << 20, ""},
		{[]string{"--clickhouse-projector-linger", "-1s"}, 0, 0, 0, "clickhouse_projector_linger"},
		{[]string{"--clickhouse-projector-linger", "31s"}, 0, 0, 0, "clickhouse_projector_linger"},
		{[]string{"--projector-max-batch", "0"}, 0, 0, 0, "projector_max_batch"},
		{[]string{"--projector-max-batch-bytes", "-5"}, 0, 0, 0, "projector_max_batch_bytes"},
	} {
		s, err := load("projector clickhouse", append([]string{"--log-level", "error"}, tc.flags...), "json")
		if err != nil {
			t.Fatal(err)
		}
		var opts stack.Options
		err = s.projectorBatches(&opts)
		switch {
		case tc.badKey != "" && (err == nil || !strings.Contains(err.Error(), tc.badKey)):
			t.Errorf("%v: %v, want an error naming %s", tc.flags, err, tc.badKey)
		case tc.badKey == "" && (err != nil || opts.ClickHouseLinger != tc.linger ||
			opts.ProjectorMaxBatch != tc.batch || opts.ProjectorMaxBatchBytes != tc.bytes):
			t.Errorf("%v: linger %s, batch %d, %d bytes, %v; want %s, %d, %d",
				tc.flags, opts.ClickHouseLinger, opts.ProjectorMaxBatch, opts.ProjectorMaxBatchBytes, err,
				tc.linger, tc.batch, tc.bytes)
		}
	}
}
