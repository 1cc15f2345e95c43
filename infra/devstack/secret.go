package devstack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// passwordBytes is the entropy of a generated password: 128 bits.
const passwordBytes = 16

// superuserPasswordFile holds the Postgres superuser's password in the data
// root, readable by xbot's user only.
const superuserPasswordFile = "superuser.password"

// superuserPassword returns the password of the cluster in dir, generating
// and saving one when there is none yet. A cluster made by an older version
// without a password gets it set when it starts (closeTrust).
func superuserPassword(dir string) (string, error) {
	pw, err := readOrCreateSecret(filepath.Join(dir, superuserPasswordFile))
	if err != nil {
		return "", fmt.Errorf("postgres superuser password: %w", err)
	}
	return pw, nil
}

// readOrCreateSecret reads the secret in path or, when there is none,
// writes a new random one there (0600).
func readOrCreateSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	secret, err := newSecret()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return secret, nil
}

// newSecret returns a random hex password.
func newSecret() (string, error) {
	var raw [passwordBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("generate a password: %w", err)
	}
	return hex.EncodeToString(raw[:]), nil
}
