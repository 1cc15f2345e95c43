package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultCORSMaxAge is how long a browser may reuse a preflight's answer:
// ten minutes saves a preflight per request of an active page, and a
// changed origin list reaches browsers within that time. (Chromium caps it
// at two hours, Firefox at a day.)
const DefaultCORSMaxAge = 10 * time.Minute

// AnyOrigin in CORSConfig.AllowedOrigins lets every origin read the API's
// answers. It is refused together with AllowCredentials.
const AnyOrigin = "*"

// corsAllowedHeaders are the request headers a cross-origin request may
// send: the bearer token, the command key, the stream cursor and JSON
// bodies. Browsers send nothing else the API reads.
var corsAllowedHeaders = []string{"Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"}

// corsExposedHeaders are the response headers, besides the CORS-safelisted
// ones, a page may read: when to retry a refused stream, and the schema of
// an answer (schemalink.go).
var corsExposedHeaders = []string{"Retry-After", "Link"}

// corsMethods are the methods of the API's routes.
var corsMethods = []string{http.MethodGet, http.MethodPost, http.MethodDelete}

// CORSConfig lets browser pages of other origins call the API and read its
// answers and streams (Cross-Origin Resource Sharing). It is off while
// AllowedOrigins is empty: no answer carries a CORS header, and browsers
// keep other origins' pages from reading the API. A request from an origin
// not in the list is served as without CORS and gets no CORS header, so
// its page cannot read the answer. Tokens stay required: CORS only decides
// which pages may read what a token is answered (docs/clients.md shows the
// backend-for-frontend pattern that keeps tokens out of browsers).
type CORSConfig struct {
	// AllowedOrigins lists the origins (scheme://host[:port], no path) whose
	// pages may call the API, compared exactly after lower-casing and
	// dropping a default port; AnyOrigin ("*") allows every origin.
	// Default none: CORS off.
	AllowedOrigins []string
	// AllowCredentials lets pages send cookies and HTTP authentication
	// (Access-Control-Allow-Credentials). The API authenticates by bearer
	// token only, so it is not needed, and it is off by default: a
	// credentialed cross-origin request is something only a trusted page
	// should be able to make.
	AllowCredentials bool
	// MaxAge is how long a browser may cache a preflight's answer. Default
	// DefaultCORSMaxAge.
	MaxAge time.Duration
}

func (c *CORSConfig) setDefaults() {
	setDefault(&c.MaxAge, DefaultCORSMaxAge)
}

// enabled reports whether any origin is allowed.
func (c CORSConfig) enabled() bool { return len(c.AllowedOrigins) > 0 }

// validate reports every malformed origin.
func (c CORSConfig) validate() error {
	var errs []error
	for _, o := range c.AllowedOrigins {
		if o == AnyOrigin {
			if c.AllowCredentials {
				errs = append(errs, errors.New("api: CORS origin \"*\" cannot be combined with AllowCredentials; list the origins"))
			}
			continue
		}
		if _, err := normalOrigin(o); err != nil {
			errs = append(errs, fmt.Errorf("api: CORS origin %q: %w", o, err))
		}
	}
	if c.MaxAge < 0 {
		errs = append(errs, fmt.Errorf("api: CORS MaxAge must not be negative (got %s)", c.MaxAge))
	}
	return errors.Join(errs...)
}

// normalOrigin returns an origin in the form browsers send in the Origin
// header: lower-case scheme and host, the port only when not the scheme's
// default.
func normalOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("scheme must be http or https")
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("must be scheme://host[:port] with nothing after it")
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// corsPolicy answers cross-origin requests as a CORSConfig says.
type corsPolicy struct {
	any     bool
	origins map[string]bool
	creds   bool
	maxAge  string
}

func newCORSPolicy(c CORSConfig) *corsPolicy {
	p := &corsPolicy{origins: map[string]bool{}, creds: c.AllowCredentials,
		maxAge: strconv.Itoa(int(c.MaxAge / time.Second))}
	for _, o := range c.AllowedOrigins {
		if o == AnyOrigin {
			p.any = true
			continue
		}
		if n, err := normalOrigin(o); err == nil { // validated by Config.Validate
			p.origins[n] = true
		}
	}
	return p
}

// allows reports whether origin (an Origin header's value) may read answers.
func (p *corsPolicy) allows(origin string) bool {
	if origin == "" {
		return false
	}
	if p.any {
		return true
	}
	n, err := normalOrigin(origin)
	return err == nil && p.origins[n]
}

// cors wraps next with the CORS policy of the configuration; with CORS off
// it is next itself. A preflight (OPTIONS with Origin and
// Access-Control-Request-Method) of an allowed origin is answered 204 here,
// before authentication, since browsers send it without the token; any
// other request goes on to next.
func (a *API) cors(next http.Handler) http.Handler {
	if !a.cfg.CORS.enabled() {
		return next
	}
	p := newCORSPolicy(a.cfg.CORS)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if !p.allows(origin) {
			next.ServeHTTP(w, r)
			return
		}
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		p.allowOrigin(h, origin)
		if !preflight {
			h.Set("Access-Control-Expose-Headers", strings.Join(corsExposedHeaders, ", "))
			next.ServeHTTP(w, r)
			return
		}
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		h.Set("Access-Control-Allow-Methods", strings.Join(corsMethods, ", "))
		h.Set("Access-Control-Allow-Headers", strings.Join(corsAllowedHeaders, ", "))
		h.Set("Access-Control-Max-Age", p.maxAge)
		w.WriteHeader(http.StatusNoContent)
	})
}

// allowOrigin sets the headers that let origin read the answer.
func (p *corsPolicy) allowOrigin(h http.Header, origin string) {
	if p.any && !p.creds {
		h.Set("Access-Control-Allow-Origin", AnyOrigin)
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
	}
	if p.creds {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}
