package commands

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
)

// Limits of the command protocol.
const (
	// MaxContentBytes bounds user content: 256 KiB keeps one command well under
	// Kafka's default 1 MiB record limit together with its envelope.
	MaxContentBytes = 256 << 10
	// MaxIdempotencyKeyLen is the longest idempotency key accepted.
	MaxIdempotencyKeyLen = 160
	maxReasonBytes       = 1024
	maxMetadataEntries   = 32
)

var (
	keyPattern     = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)
	namePattern    = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	sessionPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)
)

// FieldError names one invalid field by its JSON path.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ValidationError lists every problem found in a command.
type ValidationError struct {
	Problems []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Message
	}
	return "invalid command: " + strings.Join(parts, "; ")
}

type checker struct{ problems []FieldError }

func (c *checker) add(field, format string, args ...any) {
	c.problems = append(c.problems, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) match(field, value string, re *regexp.Regexp, what string) {
	if !re.MatchString(value) {
		c.add(field, "must be %s", what)
	}
}

func (c *checker) id(field, prefix, value string) {
	if !events.ValidID(prefix, value) {
		c.add(field, "must be %s_ followed by a ULID or UUID", prefix)
	}
}

func (c *checker) maxBytes(field, value string, limit int) {
	if len(value) > limit {
		c.add(field, "must be at most %d bytes (got %d)", limit, len(value))
	}
}

func (c *checker) content(field, value string) {
	switch {
	case value == "":
		c.add(field, "is required")
	case len(value) > MaxContentBytes:
		c.add(field, "must be at most %d bytes (got %d)", MaxContentBytes, len(value))
	}
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: c.problems}
}

// ValidIdempotencyKey reports whether key is 1–160 characters of [A-Za-z0-9._:-].
func ValidIdempotencyKey(key string) bool { return keyPattern.MatchString(key) }

// Validate checks the envelope and its payload and returns the decoded payload.
// The error is a *ValidationError listing every problem.
func (c Envelope) Validate() (any, error) {
	var ck checker
	ck.id("commandId", "cmd", c.CommandID)
	ck.match("idempotencyKey", c.IdempotencyKey, keyPattern, "1-160 characters of [A-Za-z0-9._:-]")
	ck.id("runId", "run", c.RunID)
	if c.PlatformSessionID != "" {
		ck.match("platformSessionId", c.PlatformSessionID, sessionPattern, "1-160 characters of [A-Za-z0-9._:-]")
	}
	ck.match("tenantId", c.TenantID, namePattern, "1-64 characters of [A-Za-z0-9._-]")
	validateActor(&ck, c.Actor)
	if c.IssuedAt <= 0 {
		ck.add("issuedAt", "must be a positive Unix time in milliseconds")
	}
	if c.SchemaVersion != events.SchemaVersion {
		ck.add("schemaVersion", "must be %q", events.SchemaVersion)
	}
	p, err := c.DecodePayload()
	if err != nil {
		field := "payload"
		if _, typeErr := NewPayload(c.Type); typeErr != nil {
			field = "type"
		}
		ck.add(field, "%s", err.Error())
		return nil, ck.err()
	}
	validatePayload(&ck, c, p)
	return p, ck.err()
}

func validateActor(ck *checker, a events.Actor) {
	switch a.Type {
	case "user", "service", "system":
	default:
		ck.add("actor.type", "must be one of user, service, system")
	}
	ck.match("actor.id", a.ID, keyPattern, "1-160 characters of [A-Za-z0-9._:-]")
}

func validatePayload(ck *checker, c Envelope, p any) {
	if !utf8.Valid(c.Payload) {
		// encoding/json turns invalid bytes into U+FFFD silently; refuse
		// instead of storing text the user never sent.
		field := map[Type]string{CreateRun: "payload.input.content", AppendUserInput: "payload.content"}[c.Type]
		if field == "" {
			field = "payload"
		}
		ck.add(field, "must be valid UTF-8 (the payload holds invalid UTF-8 bytes)")
	}
	switch v := p.(type) {
	case *CreateRunPayload:
		validateCreate(ck, c, v)
	case *AppendUserInputPayload:
		validateInput(ck, c, v)
	case *CancelRunPayload:
		ck.maxBytes("payload.reason", v.Reason, maxReasonBytes)
		if v.Interrupt && c.PlatformSessionID == "" {
			ck.add("platformSessionId", "is required for a session's interrupt")
		}
		if (v.CancelQueued || v.Behind != "") && !v.Interrupt {
			ck.add("payload", "cancelQueued and behind belong to a session's interrupt (interrupt true)")
		}
		if v.Behind != "" {
			ck.id("payload.behind", "run", v.Behind)
		}
	case *SubmitApprovalDecisionPayload:
		ck.id("payload.itemId", "itm", v.ItemID)
		if v.Decision != "allow" && v.Decision != "deny" {
			ck.add("payload.decision", "must be allow or deny")
		}
		if v.Scope != "item" && v.Scope != "run" && v.Scope != "platform_session" {
			ck.add("payload.scope", "must be one of item, run, platform_session")
		}
		ck.maxBytes("payload.reason", v.Reason, maxReasonBytes)
		validateGrantTTL(ck, v)
	case *RevokePermissionGrantPayload:
		ck.id("payload.grantId", "grt", v.GrantID)
		ck.maxBytes("payload.reason", v.Reason, maxReasonBytes)
	case *RequestCompactionPayload:
		ck.maxBytes("payload.reason", v.Reason, maxReasonBytes)
	}
}

func validateInput(ck *checker, c Envelope, v *AppendUserInputPayload) {
	switch v.Intent {
	case IntentSteer, IntentFollowUp, IntentClarification:
		if v.AgentID != "" || v.SandboxKey != nil || v.Options != nil || v.Behind != "" {
			ck.add("payload", "agentId, sandboxKey, options and behind belong to a session message (intent auto)")
		}
	case IntentAuto:
		validateSessionMessage(ck, c, v)
	default:
		ck.add("payload.intent", "must be one of steer, follow_up, clarification, auto")
	}
	ck.content("payload.content", v.Content)
	ck.maxBytes("payload.interactionId", v.InteractionID, MaxIdempotencyKeyLen)
}

// validateSessionMessage checks what a session message carries for the
// session's first run.
func validateSessionMessage(ck *checker, c Envelope, v *AppendUserInputPayload) {
	if c.PlatformSessionID == "" {
		ck.add("platformSessionId", "is required for a session message (intent auto)")
	}
	if v.AgentID != "" {
		ck.match("payload.agentId", v.AgentID, namePattern, "1-64 characters of [A-Za-z0-9._-]")
	}
	if sk := v.SandboxKey; sk != nil {
		if sk.TenantID != c.TenantID {
			ck.add("payload.sandboxKey.tenantId", "must equal the command's tenantId")
		}
		ck.match("payload.sandboxKey.workspaceId", sk.WorkspaceID, keyPattern, "1-160 characters of [A-Za-z0-9._:-]")
		ck.match("payload.sandboxKey.agentId", sk.AgentID, namePattern, "1-64 characters of [A-Za-z0-9._-]")
		ck.match("payload.sandboxKey.ownerId", sk.OwnerID, keyPattern, "1-160 characters of [A-Za-z0-9._:-]")
	}
	if v.Behind != "" {
		ck.id("payload.behind", "run", v.Behind)
	}
}

// maxSessionGrants bounds the grants a run inherits.
const maxSessionGrants = 100

func validateCreate(ck *checker, c Envelope, v *CreateRunPayload) {
	ck.match("payload.agentId", v.AgentID, namePattern, "1-64 characters of [A-Za-z0-9._-]")
	ck.content("payload.input.content", v.Input.Content)
	if v.ParentRunID != "" {
		ck.id("payload.parentRunId", "run", v.ParentRunID)
	}
	if v.SandboxKey.TenantID != c.TenantID {
		ck.add("payload.sandboxKey.tenantId", "must equal the command's tenantId")
	}
	ck.match("payload.sandboxKey.workspaceId", v.SandboxKey.WorkspaceID, keyPattern, "1-160 characters of [A-Za-z0-9._:-]")
	ck.match("payload.sandboxKey.agentId", v.SandboxKey.AgentID, namePattern, "1-64 characters of [A-Za-z0-9._-]")
	ck.match("payload.sandboxKey.ownerId", v.SandboxKey.OwnerID, keyPattern, "1-160 characters of [A-Za-z0-9._:-]")
	ck.options("payload.options", v.Options)
	if len(v.SessionGrants) > maxSessionGrants {
		ck.add("payload.sessionGrants", "must have at most %d grants", maxSessionGrants)
	}
	for i, g := range v.SessionGrants {
		f := fmt.Sprintf("payload.sessionGrants[%d]", i)
		ck.id(f+".grantId", "grt", g.GrantID)
		if g.Scope != events.ScopePlatformSession {
			ck.add(f+".scope", "must be platform_session (only session grants outlive their run)")
		}
		ck.match(f+".toolName", g.ToolName, keyPattern, "1-160 characters of [A-Za-z0-9._:-]")
		ck.maxBytes(f+".ruleId", g.RuleID, MaxIdempotencyKeyLen)
	}
	if h := v.History; h != nil {
		if len(h.Runs) > MaxHistoryRuns {
			ck.add("payload.history.runs", "must have at most %d runs", MaxHistoryRuns)
		}
		for i, r := range h.Runs {
			f := fmt.Sprintf("payload.history.runs[%d]", i)
			ck.id(f+".runId", "run", r.RunID)
			if r.Partition < 0 || r.From < 0 || r.To < r.From {
				ck.add(f, "must have partition >= 0 and 0 <= from <= to")
			}
		}
	}
	if len(v.Metadata) > maxMetadataEntries {
		ck.add("payload.metadata", "must have at most %d entries", maxMetadataEntries)
	}
	for k, val := range v.Metadata {
		if !namePattern.MatchString(k) || len(val) > maxReasonBytes {
			ck.add("payload.metadata."+k, "keys are 1-64 characters of [A-Za-z0-9._-], values at most %d bytes", maxReasonBytes)
		}
	}
}
