package openai

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// maxMessage bounds an error message taken from a response, so a proxy's
// HTML error page does not end up whole in an event history.
const maxMessage = 1000

// apiError is what a server said about a failure, in any of the shapes in
// use: OpenAI/DeepSeek/Qwen/Ollama/llama.cpp {"error":{"message","type",
// "code"}}, vLLM's flat {"object":"error","message","type","code"}, Ollama's
// native {"error":"..."}, FastAPI's {"detail":...}, or plain text.
type apiError struct {
	message string
	typ     string
	code    string // string codes only; numeric codes land in status
	status  int    // numeric code, when the server put one in the body
}

type errorFields struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

type errorEnvelope struct {
	errorFields
	Error  json.RawMessage `json:"error"`
	Detail json.RawMessage `json:"detail"`
}

// parseError reads an error body or an in-stream error payload.
func parseError(body []byte) apiError {
	var env errorEnvelope
	if json.Unmarshal(body, &env) != nil {
		return apiError{message: strings.TrimSpace(string(body))}
	}
	f := env.errorFields
	var s string
	switch {
	case json.Unmarshal(env.Error, &s) == nil:
		f = errorFields{Message: s}
	case len(env.Error) > 0 && string(env.Error) != "null":
		_ = json.Unmarshal(env.Error, &f) // a shape we cannot read leaves f as is
	}
	e := apiError{message: f.Message, typ: f.Type}
	if json.Unmarshal(f.Code, &e.code) != nil {
		e.status, _ = strconv.Atoi(strings.TrimSpace(string(f.Code)))
	}
	if e.message == "" && len(env.Detail) > 0 {
		if json.Unmarshal(env.Detail, &s) == nil {
			e.message = s
		} else {
			e.message = string(env.Detail)
		}
	}
	if e.message == "" && e.typ == "" && e.code == "" {
		e.message = strings.TrimSpace(string(body))
	}
	return e
}

// classify turns what the server said into a *model.Error. status is the
// HTTP status, 0 for an error inside a 200 stream; delivered says whether
// output already reached onDelta (then nothing is retryable).
func (p *Provider) classify(status int, e apiError, delivered bool) *model.Error {
	err := &model.Error{Status: status, Code: cmpOr(e.code, e.typ), Message: p.redact(e.message)}
	if err.Message == "" {
		err.Message = http.StatusText(status)
	}
	err.Overflow = isOverflow(status, e)
	err.Retryable = !delivered && !err.Overflow && isTransient(status, e)
	return err
}

// isTransient says whether the same request may succeed later.
func isTransient(status int, e apiError) bool {
	if status == 0 {
		status = e.status
	}
	switch {
	case status == http.StatusTooManyRequests:
		// A spent quota or a request larger than the whole per-minute budget
		// will not clear by waiting.
		return e.code != "insufficient_quota" && !strings.HasPrefix(e.message, "Request too large")
	case status == http.StatusRequestTimeout || status >= 500:
		return true
	case status != 0:
		return false
	}
	// A stream error without a status: judge by its type.
	t := strings.ToLower(e.typ + " " + e.code)
	return strings.Contains(t, "server_error") || strings.Contains(t, "overloaded") ||
		strings.Contains(t, "rate_limit") || strings.Contains(t, "unavailable") || strings.Contains(t, "timeout")
}

// overflowCodes are error codes and types that mean the context window was
// exceeded: OpenAI (and servers copying it), llama.cpp.
var overflowCodes = []string{"context_length_exceeded", "exceed_context_size_error", "model_context_window_exceeded"}

// overflowPhrases are lower-case message fragments that mean the context
// window was exceeded, with the server each was seen from.
var overflowPhrases = []string{
	"context length",                           // OpenAI/vLLM/DeepSeek/OpenRouter "maximum context length is N tokens", LM Studio, Ollama "exceeds the context length"
	"context_length_exceeded",                  // code echoed in a message
	"context window",                           // OpenAI "exceeds the context window", MiniMax
	"available context size",                   // llama.cpp "the request exceeds the available context size"
	"configured context size",                  // "prompt has N tokens, but the configured context size is M"
	"too many tokens",                          // generic
	"prompt is too long",                       // Anthropic-compatible gateways
	"input is too long",                        // Bedrock-backed gateways
	"maximum model length",                     // vLLM "is longer than the maximum model length"
	"reduce the length of the messages",        // OpenAI, Groq, DeepSeek
	"maximum prompt length",                    // xAI
	"maximum number of tokens allowed",         // Gemini OpenAI-compatible
	"range of input length should be",          // Qwen/DashScope compatible mode
	"exceeded model token limit",               // Moonshot/Kimi
	"input tokens exceed the configured limit", // OpenAI (newer models)
}

// isOverflow recognises a context-window error. Rate limits and server errors
// never count: their messages mention tokens too ("tokens per min").
func isOverflow(status int, e apiError) bool {
	if status == 0 {
		status = e.status
	}
	if status == http.StatusTooManyRequests || status >= 500 {
		return false
	}
	if status == http.StatusRequestEntityTooLarge {
		return true // Cerebras and proxies: the request must shrink either way
	}
	for _, c := range overflowCodes {
		if e.code == c || e.typ == c {
			return true
		}
	}
	msg := strings.ToLower(e.message)
	for _, p := range overflowPhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// redact removes credentials from s and bounds its length.
func (p *Provider) redact(s string) string {
	for _, secret := range p.secrets {
		s = strings.ReplaceAll(s, secret, "[REDACTED]")
	}
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
