package commands

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// sessionPrefix marks the fingerprint of a session's command, which covers
// the session too (Fingerprint).
const sessionPrefix = "s1:"

// Fingerprint identifies what command c asks for, so that an idempotency key
// used again for something else can be told from a retry: the SHA-256 (hex)
// of its type and its payload in canonical form (decoded, then encoded with
// Go's fixed field order and sorted map keys). It leaves out what differs
// between a request and its retry: the commandId, issuedAt, the actor and
// envelope fields the caller does not choose, and a CreateRun's session
// grants and history, which the runtime looks up anew for each attempt. A payload that
// does not decode is fingerprinted as its raw bytes.
//
// A session's command (a message, intent auto; an interrupt) covers its
// platform session as well, and its fingerprint starts with "s1:": keys are
// tenant-wide, and the same key sent to another session is another request
// (idempotency_key_reused), not a retry of the first. Compare recorded
// fingerprints with SameRequest, which reads those recorded before sessions
// counted.
func Fingerprint(c Envelope) string {
	p, scoped := canonicalPayload(c)
	if scoped {
		return sessionPrefix + digest(c, p, c.PlatformSessionID)
	}
	return digest(c, p, "")
}

// SameRequest reports whether c is the request a recorded fingerprint
// stands for. A session command's fingerprint recorded without the session
// (before it counted: no "s1:") is compared the way it was made.
func SameRequest(recorded string, c Envelope) bool {
	p, scoped := canonicalPayload(c)
	if scoped && !strings.HasPrefix(recorded, sessionPrefix) {
		return recorded == digest(c, p, "")
	}
	return recorded == Fingerprint(c)
}

func digest(c Envelope, payload []byte, session string) string {
	h := sha256.New()
	h.Write([]byte(c.Type))
	h.Write([]byte{0})
	h.Write(payload)
	if session != "" {
		h.Write([]byte{0})
		h.Write([]byte(session))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalPayload is c's payload in canonical form; scoped: c is a
// session's command.
func canonicalPayload(c Envelope) (raw []byte, scoped bool) {
	p, err := c.DecodePayload()
	if err != nil {
		return c.Payload, false
	}
	switch v := p.(type) {
	case *CreateRunPayload:
		cp := *v
		cp.SessionGrants, cp.History = nil, nil
		p = &cp
	case *AppendUserInputPayload:
		cp := *v
		cp.Behind = ""
		p, scoped = &cp, v.Intent == IntentAuto
	case *CancelRunPayload:
		cp := *v
		cp.Behind = ""
		p, scoped = &cp, v.Interrupt
	}
	raw, err = json.Marshal(p)
	if err != nil {
		return c.Payload, false
	}
	return raw, scoped
}
