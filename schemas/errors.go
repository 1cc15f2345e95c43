package schemas

import (
	"encoding/json"
	"fmt"
	"io/fs"
)

// ErrorCode is one entry of the error-code registry (v1/errors.json): a
// stable code and the HTTP status the API answers it with.
type ErrorCode struct {
	Code        string `json:"code"`
	Status      int    `json:"status"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// Errors returns the error-code registry in file order. It fails only if the
// embedded errors.json is malformed, which this package's tests rule out.
func Errors() ([]ErrorCode, error) {
	data, err := fs.ReadFile(V1(), ErrorsFile)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ErrorsFile, err)
	}
	var codes []ErrorCode
	if err := json.Unmarshal(data, &codes); err != nil {
		return nil, fmt.Errorf("decode %s: %w", ErrorsFile, err)
	}
	return codes, nil
}
