package commands

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Fingerprint identifies what command c asks for, so that an idempotency key
// used again for something else can be told from a retry: the SHA-256 (hex)
// of its type and its payload in canonical form (decoded, then encoded with
// Go's fixed field order and sorted map keys). It leaves out what differs
// between a request and its retry: the commandId, issuedAt, the actor and
// envelope fields the caller does not choose, and a CreateRun's session
// grants and history, which the runtime looks up anew for each attempt. A payload that
// does not decode is fingerprinted as its raw bytes.
func Fingerprint(c Envelope) string {
	h := sha256.New()
	h.Write([]byte(c.Type))
	h.Write([]byte{0})
	h.Write(canonicalPayload(c))
	return hex.EncodeToString(h.Sum(nil))
}

func canonicalPayload(c Envelope) []byte {
	p, err := c.DecodePayload()
	if err != nil {
		return c.Payload
	}
	switch v := p.(type) {
	case *CreateRunPayload:
		cp := *v
		cp.SessionGrants, cp.History = nil, nil
		p = &cp
	case *AppendUserInputPayload:
		cp := *v
		cp.Behind = ""
		p = &cp
	case *CancelRunPayload:
		cp := *v
		cp.Behind = ""
		p = &cp
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return c.Payload
	}
	return raw
}
