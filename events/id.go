package events

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"regexp"
	"time"
)

// crockford is the ULID alphabet.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns prefix + "_" + a new ULID (time-ordered, 26 characters).
func NewID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // the OS entropy source is gone; nothing can continue safely
	}
	return prefix + "_" + encode(b)
}

// DerivedID returns prefix + "_" + 26 characters derived from parts, so that a
// retried request reproduces the same id.
func DerivedID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[0] &= 0x7 // keep the first character within the ULID range 0-7
	return prefix + "_" + encode(b)
}

func encode(b [16]byte) string {
	// 128 bits → 26 base32 characters, most significant first (ULID layout).
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	out := make([]byte, 26)
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}

var idPattern = regexp.MustCompile(`^[a-z]+_([0-7][0-9A-HJKMNP-TV-Z]{25}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)

// ValidID reports whether id is prefix + "_" + a ULID or a UUID.
func ValidID(prefix, id string) bool {
	return len(id) > len(prefix)+1 && id[:len(prefix)+1] == prefix+"_" && idPattern.MatchString(id)
}
