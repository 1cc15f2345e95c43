package kafkatest_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

func TestNewTopicsArePrefixedApart(t *testing.T) {
	t.Parallel()
	a, b := kafkatest.NewTopics(t, 2), kafkatest.NewTopics(t, 2)
	if a.EventsTopic() == b.EventsTopic() {
		t.Fatalf("two calls got topic %s", a.EventsTopic())
	}
}

func TestNewClusterIsTheTestsOwn(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewConfig(t, 3)
	if kc.Brokers[0] == kafkatest.Shared(t).Addrs()[0] || kc.Partitions != 3 {
		t.Fatalf("NewConfig = %+v, shared cluster at %v", kc, kafkatest.Shared(t).Addrs())
	}
}

func TestUniqueName(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, prefix string }{
		{"plain", "testuniquename-plain-"},
		{"with space", "testuniquename-with_space-"},
		{"Upper/Sub", "testuniquename-upper-sub-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
			if a == b || len(a) <= len(tc.prefix) || a[:len(tc.prefix)] != tc.prefix {
				t.Errorf("UniqueName = %q, %q; want distinct names starting %q", a, b, tc.prefix)
			}
		})
	}
}
