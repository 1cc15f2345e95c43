package kafka

import (
	"slices"
	"strings"
	"testing"
)

func TestTopicWarnings(t *testing.T) {
	tests := []struct {
		name string
		keep bool
		rf   int
		cfg  map[string]string
		want []string // a substring of each warning, in order
	}{
		{name: "kept forever, replicated", keep: true, rf: 3,
			cfg: map[string]string{"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete", "min.insync.replicas": "2"}},
		{name: "broker default retention", keep: true, rf: 3,
			cfg:  map[string]string{"retention.ms": "604800000", "retention.bytes": "-1", "min.insync.replicas": "2"},
			want: []string{"retention.ms=604800000"}},
		{name: "compacted log", keep: true, rf: 3,
			cfg:  map[string]string{"retention.ms": "-1", "cleanup.policy": "compact", "min.insync.replicas": "2"},
			want: []string{"cleanup.policy=compact"}},
		{name: "commands may expire", keep: false, rf: 3,
			cfg: map[string]string{"retention.ms": "604800000", "min.insync.replicas": "2"}},
		{name: "one replica", keep: false, rf: 1, cfg: map[string]string{"min.insync.replicas": "1"},
			want: []string{"replication factor 1"}},
		{name: "three replicas, one in sync", keep: false, rf: 3, cfg: map[string]string{"min.insync.replicas": "1"},
			want: []string{"min.insync.replicas=1 with 3 replicas"}},
		{name: "two replicas, one in sync is the most there can be with one down", keep: false, rf: 2,
			cfg: map[string]string{"min.insync.replicas": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := topicWarnings("t", tt.keep, tt.rf, tt.cfg)
			if len(got) != len(tt.want) || !slices.EqualFunc(got, tt.want, strings.Contains) {
				t.Errorf("warnings %q, want ones containing %q", got, tt.want)
			}
		})
	}
}

func TestTopicConfigs(t *testing.T) {
	c := Config{ReplicationFactor: 3}
	if got := c.topicConfigs(c.EventsTopic()); *got["retention.ms"] != "-1" || *got["min.insync.replicas"] != "2" {
		t.Errorf("events topic configs %v", got)
	}
	if got := c.topicConfigs(c.CommandsTopic()); got["retention.ms"] != nil || *got["min.insync.replicas"] != "2" {
		t.Errorf("commands topic configs %v: want the broker's retention and 2 in sync", got)
	}
	if got := (Config{ReplicationFactor: -1}).topicConfigs(c.CommandsTopic()); len(got) != 0 {
		t.Errorf("with the broker's replication factor, commands get %v, want the broker's settings", got)
	}
}
