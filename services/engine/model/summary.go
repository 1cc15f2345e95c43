package model

import (
	"errors"
	"fmt"
	"net/http"
)

// localCodes are the Error codes providers set themselves (not taken from a
// server's answer); only these appear in a Summary.
var localCodes = map[string]bool{
	"connection_error": true, "timeout": true, "not_a_stream": true, "bad_chunk": true,
	"stream_incomplete": true, "bad_request": true, "no_model": true, "empty_script": true,
	"response_too_large": true,
}

// statusClasses names the HTTP statuses a provider answers with.
var statusClasses = map[int]string{
	http.StatusBadRequest:            "bad request",
	http.StatusUnauthorized:          "authentication",
	http.StatusPaymentRequired:       "billing",
	http.StatusForbidden:             "permission",
	http.StatusNotFound:              "not found",
	http.StatusRequestTimeout:        "timeout",
	http.StatusRequestEntityTooLarge: "request too large",
	http.StatusUnprocessableEntity:   "invalid request",
	http.StatusTooManyRequests:       "rate limited",
}

// Summary describes a failed model call in words safe to show a tenant:
// the HTTP status and its class, or the provider's own failure code, never
// the text or the code a server sent (which can echo credentials, prompts
// or internal addresses). Errors that are not an *Error read "model
// provider call failed". The full error belongs in the operator log.
func Summary(err error) string {
	var me *Error
	if !errors.As(err, &me) {
		return "model provider call failed"
	}
	switch {
	case me.Overflow:
		return "the model's context window was exceeded"
	case me.Status != 0:
		return fmt.Sprintf("model provider returned HTTP %d (%s)", me.Status, statusClass(me.Status))
	case localCodes[me.Code]:
		return "model provider call failed (" + me.Code + ")"
	}
	return "model provider reported an error in its stream"
}

func statusClass(status int) string {
	if c, ok := statusClasses[status]; ok {
		return c
	}
	if status >= 500 {
		return "server error"
	}
	return "error"
}
