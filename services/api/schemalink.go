package api

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// validPublicURL checks Config.PublicURL: empty, or an absolute http(s) URL
// without query or fragment.
func validPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("api: PublicURL %q must be an absolute http(s) URL such as https://api.example.com", s)
	}
	return nil
}

// schemaHostMarker is what huma's link transformer sees as the request's
// host; the link is then rebuilt on PublicURL (or left relative).
const schemaHostMarker = "https://schema.host.invalid"

// useSchemaLinks replaces huma's default $schema transformer, which builds
// links from the request's Host and X-Forwarded-Host headers (a client can
// forge them), with one that builds them from publicURL, or relative ones.
func useSchemaLinks(c *huma.Config, publicURL string) {
	publicURL = strings.TrimSuffix(publicURL, "/")
	c.CreateHooks = []func(huma.Config) huma.Config{func(c huma.Config) huma.Config {
		lt := huma.NewSchemaLinkTransformer(schemaPrefix, c.SchemasPath)
		c.OnAddOperation = append(c.OnAddOperation, lt.OnAddOperation)
		c.Transformers = append(c.Transformers, func(ctx huma.Context, status string, v any) (any, error) {
			out, err := lt.Transform(fixedHost{ctx}, status, v)
			if err != nil || out == v {
				return out, err
			}
			rebaseSchema(out, publicURL)
			return out, nil
		})
		return c
	}}
}

// rebaseSchema swaps the marker host of the $schema field (the first field
// of the transformer's copy) for base.
func rebaseSchema(v any, base string) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct || rv.Elem().NumField() == 0 {
		return
	}
	f := rv.Elem().Field(0)
	if f.Kind() == reflect.String && f.CanSet() && strings.HasPrefix(f.String(), schemaHostMarker) {
		f.SetString(base + strings.TrimPrefix(f.String(), schemaHostMarker))
	}
}

// humaContext names the embedded context of fixedHost: embedded as
// huma.Context, its field would clash with the Context method.
type humaContext = huma.Context

// fixedHost hides the request's host headers from the link transformer.
type fixedHost struct{ humaContext }

func (fixedHost) Host() string { return schemaHostMarker }

func (h fixedHost) Header(name string) string {
	switch strings.ToLower(name) {
	case "x-forwarded-host", "forwarded":
		return ""
	}
	return h.humaContext.Header(name)
}
