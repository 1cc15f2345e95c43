package events

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"regexp"
	"strings"
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
	return withPrefix(prefix, b)
}

// DerivedID returns prefix + "_" + 26 characters derived from parts, so that a
// retried request reproduces the same id.
func DerivedID(prefix string, parts ...string) string {
	// The parts, each ended by a zero byte, hashed from the stack when they fit.
	var small [256]byte
	in := small[:0]
	for _, p := range parts {
		if len(in)+len(p)+1 > len(small) {
			in = nil
			break
		}
		in = append(append(in, p...), 0)
	}
	var sum [sha256.Size]byte
	if in != nil {
		sum = sha256.Sum256(in)
	} else {
		h := sha256.New()
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		h.Sum(sum[:0])
	}
	var b [16]byte
	copy(b[:], sum[:])
	b[0] &= 0x7 // keep the first character within the ULID range 0-7
	return withPrefix(prefix, b)
}

// withPrefix returns prefix + "_" + b encoded.
func withPrefix(prefix string, b [16]byte) string {
	var sb strings.Builder
	sb.Grow(len(prefix) + 1 + 26)
	sb.WriteString(prefix)
	sb.WriteByte('_')
	var out [26]byte
	encode(&out, b)
	sb.Write(out[:])
	return sb.String()
}

// encode writes b's 128 bits as 26 base32 characters, most significant
// first (ULID layout).
func encode(out *[26]byte, b [16]byte) {
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
}

var idPattern = regexp.MustCompile(`^[a-z]+_([0-7][0-9A-HJKMNP-TV-Z]{25}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)

// ValidID reports whether id is prefix + "_" + a ULID or a UUID.
func ValidID(prefix, id string) bool {
	return len(id) > len(prefix)+1 && id[:len(prefix)+1] == prefix+"_" && idPattern.MatchString(id)
}
