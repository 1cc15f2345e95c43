package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxProblemBytes bounds how much of an error answer is read: a problem
// document is small, and a misbehaving proxy's page need not be read whole.
const maxProblemBytes = 64 << 10

// Problem is an error answer of the API: an RFC 9457 problem document with
// xbot's stable error code, and the HTTP status it came with.
type Problem struct {
	// Status is the HTTP status of the answer.
	Status int `json:"status"`
	// Code is the stable error code (e.g. "forbidden_scope"); empty when the
	// answer was not a problem document (say, a proxy's error page).
	Code   string `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	// Method and Path name the request that was answered.
	Method, Path string `json:"-"`
}

// Error describes the answer.
func (p *Problem) Error() string {
	if p.Code == "" {
		return fmt.Sprintf("%s %s: HTTP %d %s", p.Method, p.Path, p.Status, p.Detail)
	}
	return fmt.Sprintf("%s %s: HTTP %d %s: %s", p.Method, p.Path, p.Status, p.Code, p.Detail)
}

// readProblem reads a non-2xx answer as a *Problem.
func readProblem(method, path string, resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxProblemBytes))
	p := &Problem{}
	if json.Unmarshal(raw, p) != nil || (p.Code == "" && p.Title == "") {
		p = &Problem{Detail: http.StatusText(resp.StatusCode)}
	}
	p.Status, p.Method, p.Path = resp.StatusCode, method, path
	return p
}
