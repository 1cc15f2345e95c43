package commands_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
)

func key(id string, fill byte) commands.SigningKey {
	return commands.SigningKey{ID: id, Secret: bytes.Repeat([]byte{fill}, 32)}
}

func ring(t *testing.T, keys ...commands.SigningKey) commands.KeyRing {
	t.Helper()
	r, err := commands.NewKeyRing(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSignatureCoversKeyAndValue: a signature verifies only for the record
// key and value it was made for, by a key of the ring.
func TestSignatureCoversKeyAndValue(t *testing.T) {
	t.Parallel()
	r := ring(t, key("k1", 1))
	value := []byte(`{"commandId":"cmd_1"}`)
	h := r.Sign("run_a", value)
	if err := r.Verify("run_a", value, h); err != nil {
		t.Fatalf("own signature: %v", err)
	}
	for name, tc := range map[string]struct {
		key   string
		value []byte
		h     map[string]string
	}{
		"no headers":     {"run_a", value, nil},
		"other key":      {"run_b", value, h},
		"other value":    {"run_a", []byte(`{"commandId":"cmd_2"}`), h},
		"unknown key id": {"run_a", value, map[string]string{commands.HeaderKeyID: "k9", commands.HeaderMAC: h[commands.HeaderMAC]}},
		"malformed mac":  {"run_a", value, map[string]string{commands.HeaderKeyID: "k1", commands.HeaderMAC: "%%"}},
		"other secret":   {"run_a", value, ring(t, key("k1", 2)).Sign("run_a", value)},
	} {
		if err := r.Verify(tc.key, tc.value, tc.h); !errors.Is(err, commands.ErrUnauthenticated) {
			t.Errorf("%s: err = %v, want ErrUnauthenticated", name, err)
		}
	}
}

// TestKeyRotation: the first key signs; a previous key still verifies until
// it is removed from the ring.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	old, next := key("2026-11", 1), key("2026-12", 2)
	value := []byte("v")
	byOld := ring(t, old).Sign("k", value)
	rotated := ring(t, next, old)
	if err := rotated.Verify("k", value, byOld); err != nil {
		t.Errorf("a record signed by the previous key: %v", err)
	}
	if got := rotated.Sign("k", value)[commands.HeaderKeyID]; got != next.ID {
		t.Errorf("the rotated ring signs with %s, want %s", got, next.ID)
	}
	if err := ring(t, next).Verify("k", value, byOld); !errors.Is(err, commands.ErrUnauthenticated) {
		t.Errorf("a retired key still verifies: %v", err)
	}
}

// TestParseKeyRing reads id:base64 pairs and refuses short secrets, bad ids
// and repeated ids without printing a secret.
func TestParseKeyRing(t *testing.T) {
	t.Parallel()
	k := commands.FormatKey(key("k1", 7))
	r, err := commands.ParseKeyRing(k + ", " + commands.FormatKey(key("k0", 8)))
	if err != nil || r.Current().ID != "k1" {
		t.Fatalf("ParseKeyRing: %+v, %v", r.Current().ID, err)
	}
	for _, bad := range []string{"", "k1", "k1:c2hvcnQ", "bad id:" + k[3:], k + "," + k, "k1:!!!"} {
		_, err := commands.ParseKeyRing(bad)
		if err == nil {
			t.Errorf("ParseKeyRing(%q) accepted", bad)
			continue
		}
		if secret := k[3:]; strings.Contains(err.Error(), secret) {
			t.Errorf("error %q shows the secret", err)
		}
	}
}

// BenchmarkSignVerify measures what signing costs the API and verifying the
// executor per command of about 1 KiB.
func BenchmarkSignVerify(b *testing.B) {
	r, _ := commands.NewKeyRing(key("k1", 1))
	value := bytes.Repeat([]byte("x"), 1024)
	for b.Loop() {
		if err := r.Verify("run_a", value, r.Sign("run_a", value)); err != nil {
			b.Fatal(err)
		}
	}
}
