package devstack

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ApacheTLS makes the brokers' client listener speak TLS (SSL, or SASL_SSL
// with ApacheKafkaConfig.SASLUsers). Every file is PEM.
type ApacheTLS struct {
	// CertFile and KeyFile are the brokers' certificate chain and its
	// private key (PKCS#8, PKCS#1 or SEC 1, unencrypted). The brokers also
	// connect to each other, and devstack's probes to them, through this
	// listener as 127.0.0.1: the certificate must name IP 127.0.0.1 and,
	// with ClientAuth, allow client authentication too, since the brokers
	// and the probes present it as their own client certificate.
	CertFile, KeyFile string
	// CAFile holds the certificates that sign the brokers' certificate and,
	// with ClientAuth, the clients' certificates.
	CAFile string
	// ClientAuth makes the brokers require a client certificate signed by
	// a certificate of CAFile.
	ClientAuth bool
}

func (c ApacheTLS) validate() error {
	var errs []error
	for name, path := range map[string]string{"CertFile": c.CertFile, "KeyFile": c.KeyFile, "CAFile": c.CAFile} {
		if path == "" {
			errs = append(errs, fmt.Errorf("devstack: ApacheKafkaConfig.TLS.%s is required", name))
		}
	}
	return errors.Join(errs...)
}

// tlsSetup is a TLS cluster's listener: the keystore file the brokers read
// (the key in PKCS#8, which Kafka's PEM keystore requires, then the chain)
// and the client side of devstack's own probes.
type tlsSetup struct {
	cfg      ApacheTLS
	keystore string
	client   *tls.Config
}

// newTLSSetup writes dir/broker-keystore.pem from cfg's files.
func newTLSSetup(cfg ApacheTLS, dir string) (*tlsSetup, error) {
	pair, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("devstack: load the brokers' TLS certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(pair.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("devstack: the brokers' TLS key: %w", err)
	}
	keystore := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	for _, der := range pair.Certificate {
		keystore = append(keystore, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	path := filepath.Join(dir, "broker-keystore.pem")
	if err := os.WriteFile(path, keystore, 0o600); err != nil {
		return nil, fmt.Errorf("devstack: write the brokers' keystore: %w", err)
	}
	caPEM, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("devstack: read the TLS CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("devstack: no certificate in the TLS CA file %s", cfg.CAFile)
	}
	client := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	if cfg.ClientAuth {
		client.Certificates = []tls.Certificate{pair}
	}
	return &tlsSetup{cfg: cfg, keystore: path, client: client}, nil
}

// properties are the broker settings of the TLS listener named listener.
// Its client authentication is set under the listener's name: a SASL_SSL
// listener ignores the unprefixed ssl.client.auth (KIP-684).
func (t *tlsSetup) properties(listener string) []string {
	auth := "none"
	if t.cfg.ClientAuth {
		auth = "required"
	}
	return []string{
		"ssl.keystore.type=PEM",
		"ssl.keystore.location=" + t.keystore,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + t.cfg.CAFile,
		"listener.name." + strings.ToLower(listener) + ".ssl.client.auth=" + auth,
	}
}

// dial is the option that makes a devstack client speak TLS to the brokers
// (franz-go names the server by the broker's host, 127.0.0.1).
func (t *tlsSetup) dial() kgo.Opt { return kgo.DialTLSConfig(t.client.Clone()) }
