package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/xbot-runtime/xbot/services/api"
)

// runOpenAPI prints the OpenAPI document the API of this build serves, as
// api.Document builds it: no Kafka, Postgres or setting is needed, so a
// client can be generated from it anywhere.
func runOpenAPI(args []string) error {
	fs := flag.NewFlagSet("xbot openapi", flag.ContinueOnError)
	spec := fs.String("spec", string(api.OpenAPI31), "the document: 3.1 (what /openapi.json serves) or 3.0 (/openapi-3.0.json)")
	out := fs.String("out", "", "write the document to this file instead of standard output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("usage: xbot openapi [--spec 3.1|3.0] [--out FILE]")
	}
	doc, err := api.Document(api.Spec(*spec), version)
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = os.Stdout.Write(doc)
		return err
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil { //nolint:gosec // a public document, readable like any build output
		return fmt.Errorf("write %s: %w", *out, err)
	}
	return nil
}
