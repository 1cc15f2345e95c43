package kafka_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// refusedWithin bounds an attempt that must fail: a refused client retries
// until its context ends, so the bound is how long "refused" takes here.
const refusedWithin = 3 * time.Second

// saslOnApache and tlsOnApache say what proves the kfake security tests on
// Apache Kafka.
const (
	saslOnApache = "TestSASLOnApacheKafka"
	tlsOnApache  = "TestTLSOnApacheKafka"
)

// startFake starts a kfake cluster with opts and returns its addresses.
func startFake(t *testing.T, opts ...kfake.Opt) []string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation()}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// ensureWith runs EnsureTopics with sec against addrs, bounded by d.
func ensureWith(t *testing.T, addrs []string, sec kafka.Security, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	kc := kafka.Config{Brokers: addrs, TopicPrefix: kafkatest.UniqueName(t) + ".", Partitions: 2, Security: sec}
	return kafka.EnsureTopics(ctx, kc)
}

func TestSASLRefusesClientWithoutCredentials(t *testing.T) {
	t.Parallel()
	kafkatest.RequireFake(t, saslOnApache)
	for _, mech := range []string{kafka.SASLPlain, kafka.SASLScramSHA256, kafka.SASLScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			addrs := startFake(t, kfake.EnableSASL(), kfake.Superuser(mech, "xbot", "s3cret-pass"))
			if err := ensureWith(t, addrs, kafka.Security{}, refusedWithin); err == nil {
				t.Fatal("a client without SASL credentials was served")
			}
			wrong := kafka.Security{SASLMechanism: mech, SASLUsername: "xbot", SASLPassword: "wrong"}
			if err := ensureWith(t, addrs, wrong, refusedWithin); err == nil {
				t.Fatal("a client with a wrong password was served")
			}
			good := kafka.Security{SASLMechanism: mech, SASLUsername: "xbot", SASLPassword: "s3cret-pass"}
			if err := ensureWith(t, addrs, good, waitTimeout); err != nil {
				t.Fatalf("client with credentials: %v", err)
			}
		})
	}
}

// startApache starts a one-node Apache Kafka cluster with cfg's listener
// security for t, or skips t unless the tests run on Apache Kafka (kfake
// names the kfake test of the same).
func startApache(t *testing.T, kfakeTest string, cfg devstack.ApacheKafkaConfig) *devstack.ApacheKafka {
	t.Helper()
	if !kafkatest.OnApache(t) {
		t.Skipf("starts a JVM; runs with %s=%s (on kfake: %s)", kafkatest.BrokerEnv, kafkatest.Apache, kfakeTest)
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg.Dir, cfg.Brokers, cfg.Partitions, cfg.Logger = t.TempDir(), 1, 2, zaptest.NewLogger(t)
	k, err := devstack.StartApacheKafka(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

// TestSASLOnApacheKafka signs in to a one-node Apache Kafka cluster whose
// listener requires SASL, with each mechanism xbot offers. A real broker
// answers a wrong password with SASL_AUTHENTICATION_FAILED, and EnsureTopics
// returns that at once: an operator with a mistyped password is told so when
// the process starts. (kfake closes the connection instead, which franz-go
// retries until the context ends: the kfake test can only see a refusal.)
func TestSASLOnApacheKafka(t *testing.T) {
	const user, pass = "xbot", "s3cret-pass"
	k := startApache(t, "TestSASLRefusesClientWithoutCredentials", devstack.ApacheKafkaConfig{SASLUsers: map[string]string{user: pass}})
	// A bound the refusals never reach: each is told at once, by the broker.
	ensure := func(t *testing.T, sec kafka.Security) error {
		t.Helper()
		return ensureWith(t, k.Addrs(), sec, time.Minute)
	}
	var closed *kgo.ErrFirstReadEOF
	if err := ensure(t, kafka.Security{}); !errors.As(err, &closed) {
		t.Errorf("a client without SASL credentials: %v, want the broker to close its first connection", err)
	}
	for _, mech := range []string{kafka.SASLPlain, kafka.SASLScramSHA256, kafka.SASLScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			wrong := kafka.Security{SASLMechanism: mech, SASLUsername: user, SASLPassword: "wrong"}
			if err := ensure(t, wrong); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Errorf("a wrong password: %v, want %v", err, kerr.SaslAuthenticationFailed)
			}
			unknown := kafka.Security{SASLMechanism: mech, SASLUsername: "nobody", SASLPassword: pass}
			if err := ensure(t, unknown); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Errorf("an unknown user: %v, want %v", err, kerr.SaslAuthenticationFailed)
			}
			good := kafka.Security{SASLMechanism: mech, SASLUsername: user, SASLPassword: pass}
			if err := ensure(t, good); err != nil {
				t.Fatalf("the right password: %v", err)
			}
		})
	}
}

func TestTLSVerifiesBrokerAndPresentsClientCert(t *testing.T) {
	t.Parallel()
	kafkatest.RequireFake(t, tlsOnApache)
	pki := newTestPKI(t)
	serverTLS := &tls.Config{
		MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pki.server},
		ClientCAs: pki.pool, ClientAuth: tls.RequireAndVerifyClientCert,
	}
	addrs := startFake(t, kfake.TLS(serverTLS), kfake.EnableSASL(), kfake.Superuser(kafka.SASLScramSHA512, "xbot", "pw"))
	sasl := kafka.Security{SASLMechanism: kafka.SASLScramSHA512, SASLUsername: "xbot", SASLPassword: "pw"}

	if err := ensureWith(t, addrs, sasl, refusedWithin); err == nil {
		t.Fatal("a plaintext client was served by a TLS broker")
	}
	noCert := sasl
	noCert.TLS, noCert.TLSCAFile = true, pki.caFile
	if err := ensureWith(t, addrs, noCert, refusedWithin); err == nil {
		t.Fatal("a client without a client certificate was served")
	}
	untrusted := sasl
	untrusted.TLS, untrusted.TLSCertFile, untrusted.TLSKeyFile = true, pki.certFile, pki.keyFile
	if err := ensureWith(t, addrs, untrusted, refusedWithin); err == nil {
		t.Fatal("a client trusted a broker certificate it has no CA for")
	}
	good := sasl
	good.TLS, good.TLSCAFile, good.TLSCertFile, good.TLSKeyFile = true, pki.caFile, pki.certFile, pki.keyFile
	good.TLSServerName = "kafka.test"
	if err := ensureWith(t, addrs, good, waitTimeout); err != nil {
		t.Fatalf("client with CA, certificate and SASL: %v", err)
	}
}

func TestSecurityValidate(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		sec  kafka.Security
		want string
	}{
		"unknown mechanism": {kafka.Security{SASLMechanism: "GSSAPI"}, "kafka_sasl_mechanism must be"},
		"no password":       {kafka.Security{SASLMechanism: kafka.SASLPlain, SASLUsername: "u"}, "needs kafka_sasl_username and kafka_sasl_password"},
		"user no mechanism": {kafka.Security{SASLUsername: "u", SASLPassword: "pw-secret-9"}, "kafka_sasl_mechanism is empty"},
		"ca without tls":    {kafka.Security{TLSCAFile: "/ca.pem"}, "kafka_tls is false"},
		"cert without key":  {kafka.Security{TLS: true, TLSCertFile: "/c.pem"}, "go together"},
	}
	for name, tc := range cases {
		err := kafka.Config{Brokers: []string{"b:9092"}, Security: tc.sec}.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
		if err != nil && tc.sec.SASLPassword != "" && strings.Contains(err.Error(), tc.sec.SASLPassword) {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
}

// testPKI is a CA, a broker certificate for kafka.test and 127.0.0.1, and a
// client certificate, all made for one test. The broker's certificate also
// allows client authentication: Apache Kafka's brokers present it to each
// other (serverCertFile, serverKeyFile).
type testPKI struct {
	pool                          *x509.CertPool
	server                        tls.Certificate
	caFile, certFile, keyFile     string
	serverCertFile, serverKeyFile string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, caCert, caDER := newCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "xbot test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign,
	}, nil, nil)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	srvKey, _, srvDER := newCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "kafka.test"}, DNSNames: []string{"kafka.test"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, caCert, caKey)
	cliKey, _, cliDER := newCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "xbot"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, caCert, caKey)
	p := testPKI{pool: pool, caFile: filepath.Join(dir, "ca.pem"),
		certFile: filepath.Join(dir, "client.pem"), keyFile: filepath.Join(dir, "client-key.pem"),
		serverCertFile: filepath.Join(dir, "server.pem"), serverKeyFile: filepath.Join(dir, "server-key.pem")}
	p.server = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	writePEM(t, p.caFile, "CERTIFICATE", caDER)
	writePEM(t, p.certFile, "CERTIFICATE", cliDER)
	writePEM(t, p.serverCertFile, "CERTIFICATE", srvDER)
	for path, key := range map[string]*ecdsa.PrivateKey{p.keyFile: cliKey, p.serverKeyFile: srvKey} {
		der, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, path, "EC PRIVATE KEY", der)
	}
	return p
}

var serial int64

// newCert signs tmpl with parent/parentKey (self-signed when parent is nil).
func newCert(t *testing.T, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLSOnApacheKafka is TestTLSVerifiesBrokerAndPresentsClientCert against
// a one-node Apache Kafka whose listener is SASL_SSL and requires a client
// certificate.
func TestTLSOnApacheKafka(t *testing.T) {
	pki := newTestPKI(t)
	k := startApache(t, "TestTLSVerifiesBrokerAndPresentsClientCert", devstack.ApacheKafkaConfig{SASLUsers: map[string]string{"xbot": "pw"},
		TLS: &devstack.ApacheTLS{CertFile: pki.serverCertFile, KeyFile: pki.serverKeyFile, CAFile: pki.caFile, ClientAuth: true}})
	sasl := kafka.Security{SASLMechanism: kafka.SASLScramSHA512, SASLUsername: "xbot", SASLPassword: "pw"}
	// Each refusal is told at once, by what the TLS layer says: no client
	// retries until its context ends.
	plaintext := ensureWith(t, k.Addrs(), sasl, time.Minute)
	if plaintext == nil || !strings.Contains(plaintext.Error(), "plaintext connection speaking to a tls endpoint") {
		t.Errorf("a plaintext client: %v, want franz-go's hint that the broker speaks TLS", plaintext)
	}
	noCert := sasl
	noCert.TLS, noCert.TLSCAFile = true, pki.caFile
	// The broker's TLS alert (bad_certificate, or certificate_required
	// under TLS 1.3) comes as a "remote error".
	var remote *net.OpError
	if err := ensureWith(t, k.Addrs(), noCert, time.Minute); !errors.As(err, &remote) || remote.Op != "remote error" ||
		!strings.Contains(remote.Err.Error(), "certificate") {
		t.Errorf("a client without a client certificate: %v, want the broker's TLS alert about its certificate", err)
	}
	untrusted := sasl
	untrusted.TLS, untrusted.TLSCertFile, untrusted.TLSKeyFile = true, pki.certFile, pki.keyFile
	var unknownCA x509.UnknownAuthorityError
	if err := ensureWith(t, k.Addrs(), untrusted, time.Minute); !errors.As(err, &unknownCA) {
		t.Errorf("a client without the broker's CA: %v, want %T", err, unknownCA)
	}
	good := sasl
	good.TLS, good.TLSCAFile, good.TLSCertFile, good.TLSKeyFile = true, pki.caFile, pki.certFile, pki.keyFile
	if err := ensureWith(t, k.Addrs(), good, time.Minute); err != nil {
		t.Fatalf("client with CA, certificate and SASL: %v", err)
	}
}

// TestTLSOnlyOnApacheKafka: a listener that is SSL without SASL, where the
// client certificate is the only credential (mutual TLS), as many operators
// run it. A client presenting the certificate signs in with no SASL
// settings at all; one without it is refused by the TLS layer, at once.
func TestTLSOnlyOnApacheKafka(t *testing.T) {
	pki := newTestPKI(t)
	k := startApache(t, "TestTLSVerifiesBrokerAndPresentsClientCert", devstack.ApacheKafkaConfig{
		TLS: &devstack.ApacheTLS{CertFile: pki.serverCertFile, KeyFile: pki.serverKeyFile, CAFile: pki.caFile, ClientAuth: true}})
	noCert := kafka.Security{TLS: true, TLSCAFile: pki.caFile}
	var remote *net.OpError
	if err := ensureWith(t, k.Addrs(), noCert, time.Minute); !errors.As(err, &remote) || remote.Op != "remote error" ||
		!strings.Contains(remote.Err.Error(), "certificate") {
		t.Errorf("a client without a client certificate: %v, want the broker's TLS alert about its certificate", err)
	}
	good := kafka.Security{TLS: true, TLSCAFile: pki.caFile, TLSCertFile: pki.certFile, TLSKeyFile: pki.keyFile}
	if err := ensureWith(t, k.Addrs(), good, time.Minute); err != nil {
		t.Fatalf("a client with the CA and its certificate, no SASL: %v", err)
	}
}

func TestEmbeddedClusterRequiresItsSASLUser(t *testing.T) {
	t.Parallel()
	kafkatest.RequireFake(t, "none needed: the embedded cluster is kfake whatever the tests run on")
	sec := kafka.Security{SASLMechanism: kafka.SASLScramSHA256, SASLUsername: "xbot", SASLPassword: "dev-pass"}
	c, err := kafka.StartCluster(kafka.ClusterConfig{SASL: sec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := ensureWith(t, c.Addrs(), kafka.Security{}, refusedWithin); err == nil {
		t.Fatal("the embedded cluster served a client without credentials")
	}
	if err := ensureWith(t, c.Addrs(), sec, waitTimeout); err != nil {
		t.Fatalf("client with the cluster's user: %v", err)
	}
}
