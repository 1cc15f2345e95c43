package kafkatest

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// BrokerEnv names the environment variable that selects the broker every
// Kafka-using test runs against: KFake (the default, also when empty) or
// Apache.
const BrokerEnv = "XBOT_TEST_KAFKA"

// BrokersEnv names the environment variable that, under Apache, hands the
// test binaries the seed brokers (comma-separated) of a cluster that is
// already running, instead of each binary starting its own; the Taskfile's
// test-apache task sets it.
const BrokersEnv = "XBOT_TEST_KAFKA_BROKERS"

// The brokers BrokerEnv selects.
const (
	// KFake is franz-go's in-process fake, over real TCP: milliseconds to
	// start, a cluster per test when the test wants one, fault injection.
	KFake = "kfake"
	// Apache is a real Apache Kafka 4.x cluster of three KRaft nodes
	// (devstack.StartApacheKafka), one per test binary; tests that want a
	// cluster of their own get a namespace of it.
	Apache = "apache"
)

// ErrUnknownBroker means BrokerEnv holds a value other than KFake or Apache.
var ErrUnknownBroker = errors.New("unknown test broker")

// Broker returns the broker BrokerEnv selects.
func Broker() (string, error) {
	switch v := os.Getenv(BrokerEnv); v {
	case "", KFake:
		return KFake, nil
	case Apache:
		return Apache, nil
	default:
		return "", fmt.Errorf("%w: %s=%q, want %q or %q", ErrUnknownBroker, BrokerEnv, v, KFake, Apache)
	}
}

// OnApache reports whether the tests run against Apache Kafka. It fails tb
// when BrokerEnv holds an unknown value.
func OnApache(tb testing.TB) bool {
	tb.Helper()
	b, err := Broker()
	if err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	return b == Apache
}

// RequireFake skips tb on Apache Kafka: the test injects faults only kfake
// can (broker-side request hooks, a whole cluster closed and reopened in
// process). counterpart names what proves the same on a real broker.
func RequireFake(tb testing.TB, counterpart string) {
	tb.Helper()
	if OnApache(tb) {
		tb.Skipf("kfake-only fault injection (%s=%s); on Apache Kafka: %s", BrokerEnv, Apache, counterpart)
	}
}
