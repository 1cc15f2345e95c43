package devstack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// saslBrokerUser is the internal user the brokers sign in to each other as
// (and devstack's own probes); ApacheKafkaConfig.SASLUsers may not name it.
const saslBrokerUser = "devstack-broker"

// saslSetup is a SASL cluster's users: the configured ones and the internal
// one, whose password is drawn at every start (PLAIN users live in the
// brokers' configuration, not in their stored state).
type saslSetup struct {
	users      map[string]string
	brokerPass string
}

func newSASLSetup(users map[string]string) *saslSetup {
	var b [24]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read returns no error (Go 1.24)
	return &saslSetup{users: maps.Clone(users), brokerPass: base64.RawURLEncoding.EncodeToString(b[:])}
}

// properties are the broker settings of the SASL_PLAINTEXT listener: the
// three mechanisms, PLAIN between brokers, and the PLAIN users in the
// listener's JAAS configuration (SCRAM users are stored in the cluster's
// metadata: addSCRAM).
func (s *saslSetup) properties(listener string) []string {
	var plainUsers strings.Builder
	// Validate keeps '"' and '\' out of the passwords: each is quoted as is.
	fmt.Fprintf(&plainUsers, `username="%s" password="%s" user_%s="%s"`, saslBrokerUser, s.brokerPass, saslBrokerUser, s.brokerPass)
	for _, name := range slices.Sorted(maps.Keys(s.users)) {
		fmt.Fprintf(&plainUsers, ` user_%s="%s"`, name, s.users[name])
	}
	prefix := "listener.name." + strings.ToLower(listener) + "."
	return []string{
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		prefix + "plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required " + plainUsers.String() + ";",
		prefix + "scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
		prefix + "scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
	}
}

// internal is the mechanism devstack's own clients sign in with.
func (s *saslSetup) internal() sasl.Mechanism {
	return plain.Auth{User: saslBrokerUser, Pass: s.brokerPass}.AsMechanism()
}

// addSCRAM returns a probe that stores every user's SCRAM-SHA-256 and
// SCRAM-SHA-512 credentials in the cluster, signed in as the internal user.
func (s *saslSetup) addSCRAM(opts []kgo.Opt) func(context.Context) error {
	return func(ctx context.Context) error {
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return fmt.Errorf("kafka client: %w", err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// A request names each user once: one request per mechanism.
		for _, m := range []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512} {
			var upserts []kadm.UpsertSCRAM
			for name, pw := range s.users {
				upserts = append(upserts, kadm.UpsertSCRAM{User: name, Mechanism: m, Iterations: 4096, Password: pw})
			}
			res, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, upserts)
			if err == nil {
				err = res.Error()
			}
			if err != nil {
				return fmt.Errorf("store %s credentials: %w", m, err)
			}
		}
		return nil
	}
}

// probeSCRAM returns a probe that signs in to the broker at addr as each
// user with each SCRAM mechanism: a broker applies stored credentials once
// it has read them from the metadata log.
func (s *saslSetup) probeSCRAM(addr string, tls *tlsSetup) func(context.Context) error {
	return func(ctx context.Context) error {
		for name, pw := range s.users {
			auth := scram.Auth{User: name, Pass: pw}
			for _, m := range []sasl.Mechanism{auth.AsSha256Mechanism(), auth.AsSha512Mechanism()} {
				if err := signIn(ctx, addr, m, tls); err != nil {
					return fmt.Errorf("sign in to %s as %s with %s: %w", addr, name, m.Name(), err)
				}
			}
		}
		return nil
	}
}

// signIn asks the broker at addr for metadata, signed in with m (over TLS
// when tls is not nil).
func signIn(ctx context.Context, addr string, m sasl.Mechanism, tls *tlsSetup) error {
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RetryTimeout(time.Second)}
	if tls != nil {
		opts = append(opts, tls.dial())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = kadm.NewClient(cl).BrokerMetadata(ctx)
	return err
}
