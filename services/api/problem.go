package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/schemas"
)

// Problem is an RFC 9457 problem document (huma's error model) with xbot's
// stable error code. Every error response of the API has this shape.
//
// It is the one error schema of the OpenAPI document: every 4xx and 5xx
// answer of every operation is a Problem (responses.go).
type Problem struct {
	huma.ErrorModel
	Code events.Code `json:"code" doc:"Stable error code (schemas/v1/errors.json); branch on this, not on title or detail."`
	// Checks is set by GET /healthz only.
	Checks map[string]string `json:"checks,omitempty" doc:"Only in the 503 of GET /healthz: each dependency check's result, ok or its error message."`
}

// TransformSchema lists the codes of the error registry
// (schemas/v1/errors.json), in its order, as the enum of code, and marks
// what every problem carries as required.
func (*Problem) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	registry, err := schemas.Errors()
	if err != nil {
		panic("api: the error registry: " + err.Error()) // embedded; the schemas package's tests read it
	}
	if p := s.Properties["code"]; p != nil {
		p.Enum = nil
		for _, c := range registry {
			p.Enum = append(p.Enum, c.Code)
		}
	}
	if p := s.Properties["errors"]; p != nil {
		p.Nullable = false // absent when there are none, never null
	}
	s.Required = []string{"code", "status", "title"}
	return s
}

// maxEchoBytes bounds a value echoed back in an error detail, so a rejected
// 256 KiB content is not sent back whole.
const maxEchoBytes = 256

var installErrorModel sync.Once

// useProblems makes huma build every error — its own validation and body
// errors included — as a *Problem. huma.NewError is a package variable, so
// this affects every huma API in the process; it is installed once.
func useProblems() {
	installErrorModel.Do(func() {
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			return newProblem(status, codeForStatus(status), msg, errs...)
		}
	})
}

// newProblem builds a problem. Details of 5xx problems are dropped: they
// would carry internal error text to the client.
func newProblem(status int, code events.Code, msg string, errs ...error) *Problem {
	p := &Problem{Code: code}
	p.Status, p.Title, p.Detail = status, http.StatusText(status), msg
	if status >= http.StatusInternalServerError {
		return p
	}
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d *huma.ErrorDetail
		if de, ok := err.(huma.ErrorDetailer); ok {
			cp := *de.ErrorDetail()
			d = &cp
		} else {
			d = &huma.ErrorDetail{Message: err.Error()}
		}
		d.Value = echoable(d.Value)
		d.Location = missingLocation(d)
		p.Errors = append(p.Errors, d)
	}
	return p
}

// echoable keeps short scalar values and drops objects, arrays and long strings.
func echoable(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) > maxEchoBytes {
			return nil
		}
		return x
	case bool, float64, int, int64, json.Number:
		return x
	}
	return nil
}

// missingLocation points a "required property" error of huma at the
// missing property itself (body.agentId rather than body).
func missingLocation(d *huma.ErrorDetail) string {
	var name string
	if n, err := fmt.Sscanf(d.Message, validation.MsgExpectedRequiredProperty, &name); err != nil || n != 1 {
		return d.Location
	}
	return d.Location + "." + name
}

// codeForStatus is the code of problems huma raises itself (validation, body
// size, content negotiation) and of unknown routes.
func codeForStatus(status int) events.Code {
	switch {
	case status == http.StatusUnauthorized:
		return events.CodeUnauthorized
	case status == http.StatusNotFound, status == http.StatusMethodNotAllowed:
		return events.CodeNotFound
	case status == http.StatusForbidden:
		return events.CodeForbiddenScope
	case status == http.StatusTooManyRequests:
		return events.CodeTooManyStreams
	case status == http.StatusRequestEntityTooLarge:
		return events.CodePayloadTooLarge
	case status == http.StatusServiceUnavailable:
		return events.CodeUnavailable
	case status >= http.StatusInternalServerError:
		return events.CodeInternal
	}
	return events.CodeValidationFailed
}

// writeProblem writes p outside huma (unknown routes).
func writeProblem(w http.ResponseWriter, p *Problem) {
	b, err := json.Marshal(p)
	if err != nil {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_, _ = w.Write(b)
}
