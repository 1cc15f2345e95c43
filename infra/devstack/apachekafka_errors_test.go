package devstack_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack"
)

func TestApacheKafkaConfigValidate(t *testing.T) {
	t.Parallel()
	_, err := devstack.StartApacheKafka(context.Background(), devstack.ApacheKafkaConfig{Brokers: 2, Partitions: -1})
	for _, want := range []string{"Dir is required", "Brokers 2 must be 1 or 3", "Partitions -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

func TestApacheKafkaConfigValidateSASLUsers(t *testing.T) {
	t.Parallel()
	const secret = "pa\"ss" // a '"' would end the password's quotes in the brokers' JAAS line
	_, err := devstack.StartApacheKafka(context.Background(), devstack.ApacheKafkaConfig{Dir: t.TempDir(),
		SASLUsers: map[string]string{"ok-user": "fine", "a=b": "fine", "devstack-broker": "fine", "empty": "", "quoted": secret}})
	for _, want := range []string{`user name "a=b"`, `user name "devstack-broker"`, `password of "empty"`, `password of "quoted"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	if err != nil && (strings.Contains(err.Error(), "ok-user") || strings.Contains(err.Error(), secret)) {
		t.Errorf("error %v names a valid user or shows a password", err)
	}
}

func TestApacheKafkaConfigValidateTLS(t *testing.T) {
	t.Parallel()
	_, err := devstack.StartApacheKafka(context.Background(), devstack.ApacheKafkaConfig{Dir: t.TempDir(),
		TLS: &devstack.ApacheTLS{CertFile: "broker.pem"}})
	for _, want := range []string{"TLS.KeyFile is required", "TLS.CAFile is required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "TLS.CertFile") {
		t.Errorf("error %v names the file that is set", err)
	}
}

func TestApacheKafkaJavaAndMavenMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := devstack.StartApacheKafka(context.Background(), devstack.ApacheKafkaConfig{
		Dir: dir, JarsDir: filepath.Join(dir, "libs"),
		Java: filepath.Join(dir, "no-java"), Maven: filepath.Join(dir, "no-mvn"),
	})
	if !errors.Is(err, devstack.ErrJavaMissing) || !errors.Is(err, devstack.ErrMavenMissing) {
		t.Fatalf("want both ErrJavaMissing and ErrMavenMissing, got %v", err)
	}
	for _, want := range []string{"openjdk-17", "apt-get install -y maven"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestApacheKafkaMavenFailureShowsItsOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mvn := filepath.Join(dir, "mvn")
	script := "#!/bin/sh\necho '[ERROR] Failed to execute goal: Could not resolve dependencies'\nexit 1\n"
	if err := os.WriteFile(mvn, []byte(script), 0o700); err != nil { //nolint:gosec // an executable stub in a temp dir
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := devstack.StartApacheKafka(ctx, devstack.ApacheKafkaConfig{
		Dir: filepath.Join(dir, "data"), JarsDir: filepath.Join(dir, "libs"), Java: "/bin/true", Maven: mvn,
	})
	if !errors.Is(err, devstack.ErrKafkaJarsUnresolved) || !strings.Contains(err.Error(), "Could not resolve dependencies") {
		t.Fatalf("want ErrKafkaJarsUnresolved with Maven's last lines, got %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "libs")); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a failed resolution left %s behind (%v)", filepath.Join(dir, "libs"), statErr)
	}
}
