package api

import (
	"net/http"
	"net/url"

	"github.com/danielgtaylor/huma/v2"
)

// queryAlias is a query parameter's former name, still accepted.
type queryAlias struct {
	// Old is the former name; New the name an operation's input declares.
	Old, New string
	// GoName names the former parameter in generated Go clients, where the
	// two names would otherwise make the same field (oapi-codegen's
	// x-go-name).
	GoName string
}

// queryAliases are every renamed query parameter. Query parameters are
// camelCase; a name that was not keeps working as a deprecated alias of the
// new one: alone it means the new name, next to it with the same value it
// is ignored, and with another value the request is answered 422
// validation_failed at its location.
var queryAliases = []queryAlias{
	{Old: "after_seq", New: "afterSeq", GoName: "AfterSeqDeprecated"},
}

// aliasesOf lists the aliases of op's query parameters.
func aliasesOf(op *huma.Operation) []queryAlias {
	var out []queryAlias
	for _, p := range op.Parameters {
		if p.In != "query" || p.Deprecated {
			continue
		}
		for _, al := range queryAliases {
			if al.New == p.Name {
				out = append(out, al)
			}
		}
	}
	return out
}

// documentAliases is an OnAddOperation hook: each alias of op's query
// parameters is documented as a deprecated parameter of the same schema.
func documentAliases(_ *huma.OpenAPI, op *huma.Operation) {
	for _, al := range aliasesOf(op) {
		var schema *huma.Schema
		for _, p := range op.Parameters {
			if p.In == "query" && p.Name == al.New {
				schema = p.Schema
			}
		}
		op.Parameters = append(op.Parameters, &huma.Param{Name: al.Old, In: "query", Deprecated: true, Schema: schema,
			Description: "Deprecated: the former name of " + al.New + ", still accepted. Giving both with different " +
				"values is answered 422 validation_failed.",
			Extensions: map[string]any{"x-go-name": al.GoName, "x-deprecated-reason": "renamed to " + al.New}})
	}
}

// resolveAliases is a huma middleware: a request that names a parameter by
// its former name is served as if it used the new one; both with different
// values is a 422 problem.
func (a *API) resolveAliases(ctx huma.Context, next func(huma.Context)) {
	aliases := aliasesOf(ctx.Operation())
	if len(aliases) == 0 {
		next(ctx)
		return
	}
	u := ctx.URL()
	q, _ := url.ParseQuery(u.RawQuery) // a malformed pair is dropped, as huma's reader does
	renamed := map[string]string{}
	for _, al := range aliases {
		if !q.Has(al.Old) {
			continue
		}
		old := q.Get(al.Old)
		if q.Has(al.New) && q.Get(al.New) != old {
			_ = huma.WriteErr(a.api, ctx, http.StatusUnprocessableEntity, "validation failed", &huma.ErrorDetail{
				Location: "query." + al.Old, Value: old,
				Message: "conflicts with " + al.New + " (" + al.Old + " is its deprecated former name): give only " + al.New})
			return
		}
		renamed[al.New] = old
	}
	next(aliasedQuery{humaContext: ctx, values: renamed})
}

// humaContext names the embedded context of aliasedQuery: embedded as
// huma.Context, its field would clash with the Context method.
type humaContext = huma.Context

// aliasedQuery is a request context whose query parameters named in values
// read from there.
type aliasedQuery struct {
	humaContext
	values map[string]string
}

func (c aliasedQuery) Query(name string) string {
	if v, ok := c.values[name]; ok {
		return v
	}
	return c.humaContext.Query(name)
}

// Unwrap lets humago.Unwrap reach the request.
func (c aliasedQuery) Unwrap() huma.Context { return c.humaContext }
