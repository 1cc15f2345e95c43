package commands

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Record headers that carry a command's signature.
const (
	// HeaderKeyID names the signing key (see KeyRing).
	HeaderKeyID = "xbot-cmd-key-id"
	// HeaderMAC is the base64url (unpadded) HMAC-SHA256 of the record.
	HeaderMAC = "xbot-cmd-mac"
)

// minSecretLen is the shortest secret a signing key may have: 32 bytes is
// HMAC-SHA256's block-size-independent security level (its output size).
const minSecretLen = 32

// macDomain separates command MACs from any other use of the same key.
const macDomain = "xbot.command.v1"

// ErrUnauthenticated reports a command record that carries no valid
// signature of a known key: it was not produced by the API or an executor.
var ErrUnauthenticated = errors.New("command record is not authenticated")

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,32}$`)

// SigningKey is one secret shared by the API and the executors.
type SigningKey struct {
	// ID names the key in the record's HeaderKeyID; it is not secret.
	ID string
	// Secret is at least 32 random bytes.
	Secret []byte
}

// KeyRing holds the command-signing keys: the first signs, every one
// verifies, so a key is rotated by putting the new one first and keeping the
// old one until every record signed with it has been consumed.
type KeyRing struct {
	keys []SigningKey
}

// NewKeyRing returns a ring of keys, the first being the current one.
func NewKeyRing(keys ...SigningKey) (KeyRing, error) {
	var errs []error
	seen := map[string]bool{}
	for i, k := range keys {
		switch {
		case !keyIDPattern.MatchString(k.ID):
			errs = append(errs, fmt.Errorf("signing key %d: id must be 1-32 characters of [A-Za-z0-9._-]", i+1))
		case seen[k.ID]:
			errs = append(errs, fmt.Errorf("signing key %d: id %q is used twice", i+1, k.ID))
		case len(k.Secret) < minSecretLen:
			errs = append(errs, fmt.Errorf("signing key %q: secret must be at least %d bytes", k.ID, minSecretLen))
		}
		seen[k.ID] = true
	}
	if err := errors.Join(errs...); err != nil {
		return KeyRing{}, err
	}
	return KeyRing{keys: append([]SigningKey(nil), keys...)}, nil
}

// ParseKeyRing reads the command_signing_key setting: comma-separated
// "id:secret" pairs, the secret in standard or URL-safe base64, current key
// first. Errors never contain a secret.
func ParseKeyRing(s string) (KeyRing, error) {
	var keys []SigningKey
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, enc, ok := strings.Cut(part, ":")
		if !ok {
			return KeyRing{}, fmt.Errorf("command signing key %d: want id:base64-secret", i+1)
		}
		secret, err := decodeSecret(enc)
		if err != nil {
			return KeyRing{}, fmt.Errorf("command signing key %d (%s): secret is not base64", i+1, id)
		}
		keys = append(keys, SigningKey{ID: id, Secret: secret})
	}
	if len(keys) == 0 {
		return KeyRing{}, errors.New("command signing key: no key given")
	}
	return NewKeyRing(keys...)
}

func decodeSecret(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// GenerateKeyRing returns a ring with one fresh random key, for a process
// that runs the API and the executor together (xbot dev, tests).
func GenerateKeyRing() KeyRing {
	secret := make([]byte, minSecretLen)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails (Go 1.24+)
	return KeyRing{keys: []SigningKey{{ID: "generated", Secret: secret}}}
}

// FormatKey returns k as one command_signing_key entry ("id:base64").
func FormatKey(k SigningKey) string {
	return k.ID + ":" + base64.RawURLEncoding.EncodeToString(k.Secret)
}

// Empty reports whether the ring has no key.
func (r KeyRing) Empty() bool { return len(r.keys) == 0 }

// Current returns the signing key.
func (r KeyRing) Current() SigningKey {
	if r.Empty() {
		return SigningKey{}
	}
	return r.keys[0]
}

// Sign returns the headers that authenticate a command record with key
// recordKey and value value. It panics on an empty ring (a wiring bug).
func (r KeyRing) Sign(recordKey string, value []byte) map[string]string {
	if r.Empty() {
		panic("commands.KeyRing.Sign: no signing key")
	}
	k := r.keys[0]
	return map[string]string{HeaderKeyID: k.ID, HeaderMAC: base64.RawURLEncoding.EncodeToString(mac(k.Secret, recordKey, value))}
}

// Verify checks that headers carry a valid signature of recordKey and value
// by a key of the ring. Its error wraps ErrUnauthenticated.
func (r KeyRing) Verify(recordKey string, value []byte, headers map[string]string) error {
	id, sig := headers[HeaderKeyID], headers[HeaderMAC]
	if id == "" || sig == "" {
		return fmt.Errorf("%w: no signature", ErrUnauthenticated)
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: malformed signature", ErrUnauthenticated)
	}
	for _, k := range r.keys {
		if k.ID == id {
			if !hmac.Equal(got, mac(k.Secret, recordKey, value)) {
				return fmt.Errorf("%w: bad signature for key %s", ErrUnauthenticated, k.ID)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: unknown key id", ErrUnauthenticated)
}

// mac is HMAC-SHA256 over the domain, then the record key and the value,
// each length-prefixed so no two (key, value) pairs share an input.
func mac(secret []byte, recordKey string, value []byte) []byte {
	h := hmac.New(sha256.New, secret)
	var n [8]byte
	h.Write([]byte(macDomain))
	binary.BigEndian.PutUint64(n[:], uint64(len(recordKey)))
	h.Write(n[:])
	h.Write([]byte(recordKey))
	binary.BigEndian.PutUint64(n[:], uint64(len(value)))
	h.Write(n[:])
	h.Write(value)
	return h.Sum(nil)
}
