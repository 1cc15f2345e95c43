package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL mechanisms Security.SASLMechanism accepts.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// dialTimeout bounds one TCP (and TLS) dial to a broker; franz-go's own
// default dial timeout is 10s too.
const dialTimeout = 10 * time.Second

// Security is how every xbot Kafka client authenticates to the brokers and
// encrypts its connections. The zero value is plaintext without
// authentication: anyone who can reach such a broker can forge commands and
// read every tenant's events, so a production cluster sets SASL and TLS.
type Security struct {
	// SASLMechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; empty disables
	// SASL. PLAIN sends the password itself, so use it only with TLS.
	SASLMechanism string
	// SASLUsername and SASLPassword are the SASL credentials; both are
	// required with a mechanism.
	SASLUsername string
	SASLPassword string
	// TLS encrypts every broker connection and verifies the broker's
	// certificate (against TLSCAFile, or the system roots).
	TLS bool
	// TLSCAFile is a PEM file of CA certificates that sign the brokers'
	// certificates. Empty uses the system roots.
	TLSCAFile string
	// TLSCertFile and TLSKeyFile are a PEM client certificate and its key
	// for mutual TLS; both or neither.
	TLSCertFile string
	TLSKeyFile  string
	// TLSServerName overrides the name checked in the broker's certificate
	// (default: the host of the broker address dialled).
	TLSServerName string
}

// validate lists every problem with the settings.
func (s Security) validate() []error {
	var errs []error
	switch s.SASLMechanism {
	case "":
		if s.SASLUsername != "" || s.SASLPassword != "" {
			errs = append(errs, errors.New("kafka: kafka_sasl_username/kafka_sasl_password are set but kafka_sasl_mechanism is empty"))
		}
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if s.SASLUsername == "" || s.SASLPassword == "" {
			errs = append(errs, fmt.Errorf("kafka: kafka_sasl_mechanism %s needs kafka_sasl_username and kafka_sasl_password", s.SASLMechanism))
		}
	default:
		errs = append(errs, fmt.Errorf("kafka: kafka_sasl_mechanism must be %s, %s or %s, got %q",
			SASLPlain, SASLScramSHA256, SASLScramSHA512, s.SASLMechanism))
	}
	if !s.TLS && (s.TLSCAFile != "" || s.TLSCertFile != "" || s.TLSKeyFile != "" || s.TLSServerName != "") {
		errs = append(errs, errors.New("kafka: kafka_tls_* settings are set but kafka_tls is false"))
	}
	if (s.TLSCertFile == "") != (s.TLSKeyFile == "") {
		errs = append(errs, errors.New("kafka: kafka_tls_cert_file and kafka_tls_key_file go together"))
	}
	return errs
}

// opts returns the franz-go options that apply the settings.
func (s Security) opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if m := s.mechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	if s.TLS {
		tc, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.Dialer((&tls.Dialer{
			NetDialer: &net.Dialer{Timeout: dialTimeout}, Config: tc,
		}).DialContext))
	}
	return opts, nil
}

// mechanism returns the configured SASL mechanism, or nil.
func (s Security) mechanism() sasl.Mechanism {
	switch s.SASLMechanism {
	case SASLPlain:
		return plain.Auth{User: s.SASLUsername, Pass: s.SASLPassword}.AsMechanism()
	case SASLScramSHA256:
		return scram.Auth{User: s.SASLUsername, Pass: s.SASLPassword}.AsSha256Mechanism()
	case SASLScramSHA512:
		return scram.Auth{User: s.SASLUsername, Pass: s.SASLPassword}.AsSha512Mechanism()
	}
	return nil
}

// tlsConfig builds the client TLS configuration from the files.
func (s Security) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.TLSServerName}
	if s.TLSCAFile != "" {
		pem, err := os.ReadFile(s.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("kafka: read kafka_tls_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kafka: kafka_tls_ca_file %s holds no PEM certificate", s.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	if s.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(s.TLSCertFile, s.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("kafka: load kafka_tls_cert_file/kafka_tls_key_file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}
