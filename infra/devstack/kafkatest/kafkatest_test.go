package kafkatest_test

import (
	"errors"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

func TestNewTopicsArePrefixedApart(t *testing.T) {
	t.Parallel()
	a, b := kafkatest.NewTopics(t, 2), kafkatest.NewTopics(t, 2)
	if a.EventsTopic() == b.EventsTopic() || a.Group("g") == b.Group("g") {
		t.Fatalf("two calls got topic %s, group %s", a.EventsTopic(), a.Group("g"))
	}
}

// A test's own cluster shares nothing with another test: on kfake not even
// the brokers; on Apache Kafka no topic, group or transactional id.
func TestNewClusterIsTheTestsOwn(t *testing.T) {
	t.Parallel()
	kc, shared := kafkatest.NewConfig(t, 3), kafkatest.Shared(t).Config()
	if kc.Partitions != 3 {
		t.Fatalf("NewConfig partitions = %d, want 3", kc.Partitions)
	}
	if kafkatest.OnApache(t) {
		if kc.EventsTopic() == shared.EventsTopic() || kc.Group("xbot-executor") == shared.Group("xbot-executor") {
			t.Fatalf("NewConfig = %+v shares names with the shared cluster's %+v", kc, shared)
		}
		return
	}
	if kc.Brokers[0] == shared.Brokers[0] {
		t.Fatalf("NewConfig = %+v, shared cluster at %v", kc, shared.Brokers)
	}
}

func TestBrokerSwitch(t *testing.T) {
	tests := []struct{ env, want string }{{"", kafkatest.KFake}, {"kfake", kafkatest.KFake}, {"apache", kafkatest.Apache}}
	for _, tc := range tests {
		t.Setenv(kafkatest.BrokerEnv, tc.env)
		if got, err := kafkatest.Broker(); got != tc.want || err != nil {
			t.Errorf("%s=%q: Broker() = %q, %v; want %q", kafkatest.BrokerEnv, tc.env, got, err, tc.want)
		}
	}
	t.Setenv(kafkatest.BrokerEnv, "redpanda")
	if _, err := kafkatest.Broker(); !errors.Is(err, kafkatest.ErrUnknownBroker) {
		t.Errorf("an unknown broker: err = %v, want ErrUnknownBroker", err)
	}
}

func TestUniqueName(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, prefix string }{
		{"plain", "testuniquename-plain-"},
		{"with space", "testuniquename-with_space-"},
		{"Upper/Sub", "testuniquename-upper-sub-"},
		{"odd (chars)=1", "testuniquename-odd__chars__1-"},
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
