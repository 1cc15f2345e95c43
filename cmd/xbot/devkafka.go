package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xbot-runtime/xbot/infra/devstack"
)

// What dev_kafka may say.
const (
	devKafkaKFake  = "kfake"
	devKafkaApache = "apache"
)

// startApacheKafka runs one local Apache Kafka broker (a JVM child, KRaft
// combined controller and broker) on dev_kafka_addr's port, with its data
// and log in the data dir. One broker: dev needs the real broker's
// behaviour, not its replication; replication factor and
// min.insync.replicas are 1.
func (d *devRun) startApacheKafka(ctx context.Context, partitions int) ([]string, error) {
	sec, err := d.s.kafkaSecurity()
	if err != nil {
		return nil, err
	}
	if sec.TLS || sec.SASLMechanism != "" {
		return nil, errors.New("kafka_tls and kafka_sasl_* need an external cluster (kafka_brokers): the dev broker of dev_kafka=apache speaks plaintext")
	}
	port, err := devKafkaPort(d.s.r.Get("dev_kafka_addr"))
	if err != nil {
		return nil, err
	}
	d.apache, err = devstack.StartApacheKafka(ctx, devstack.ApacheKafkaConfig{Dir: filepath.Join(d.dataDir, "kafka-apache"),
		BrokerPort: port, Partitions: partitions, Logger: d.s.log.Named("kafka")})
	if err != nil {
		return nil, fmt.Errorf("dev_kafka=apache: %w (dev_kafka=kfake or kafka_brokers use another Kafka)", err)
	}
	d.printf("kafka      Apache Kafka %s, 1 broker, at %s (data and broker log in %s)\n", d.apache.Version(),
		strings.Join(d.apache.Addrs(), ","), d.apache.Dir())
	return d.apache.Addrs(), nil
}

// devKafkaPort is the port of dev_kafka_addr, which must be on loopback:
// the dev broker listens on 127.0.0.1 alone.
func devKafkaPort(addr string) (int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("dev_kafka_addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0, fmt.Errorf("dev_kafka_addr %q: dev_kafka=apache listens on 127.0.0.1 only", addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return 0, fmt.Errorf("dev_kafka_addr %q: port: %w", addr, err)
	}
	return port, nil
}
