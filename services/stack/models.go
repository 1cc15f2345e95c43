package stack

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/xbot-runtime/xbot/services/engine/agentloop"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/openai"
	"github.com/xbot-runtime/xbot/services/engine/model/scripted"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// LLM is the default OpenAI-compatible provider (config keys llm_base_url,
// llm_api_key, llm_model). A profile may override each.
type LLM struct {
	BaseURL string
	APIKey  string
	Model   string
}

// Configured reports whether a real model is configured.
func (l LLM) Configured() bool { return l.BaseURL != "" && l.Model != "" }

// modelResolver maps profiles to providers: the scripted model plays the
// profile's script; any other model goes to the OpenAI-compatible provider.
// Providers are built once per profile.
func modelResolver(llm LLM) agentloop.ModelResolver {
	var (
		mu    sync.Mutex
		cache = map[string]model.Provider{}
	)
	return func(p profile.Profile) (model.Provider, string, error) {
		if p.Model == profile.ModelScripted {
			return scripted.New(p.Script), profile.ModelScripted, nil
		}
		name := p.Model
		if name == "" {
			name = llm.Model
		}
		base := p.BaseURL
		if base == "" {
			base = llm.BaseURL
		}
		key, err := apiKey(p, base, llm)
		if err != nil {
			return nil, "", err
		}
		if base == "" || name == "" {
			return nil, "", errors.New("agent " + p.ID + " needs a model provider: set llm_base_url and llm_model (or baseUrl and model in the profile)")
		}
		mu.Lock()
		defer mu.Unlock()
		if prov, ok := cache[p.ID]; ok {
			return prov, name, nil
		}
		prov, err := openai.New(openai.Config{BaseURL: base, APIKey: key, Model: name})
		if err != nil {
			return nil, "", fmt.Errorf("agent %s: %w", p.ID, err)
		}
		cache[p.ID] = prov
		return prov, name, nil
	}
}

// apiKey returns the key a profile's provider at base is given: the
// profile's apiKeyEnv variable when it names one, else llm_api_key, but only
// when base has the origin (scheme, host, port) of llm_base_url. A profile
// with its own baseUrl elsewhere and no apiKeyEnv gets no key: llm_api_key
// is a credential for one provider and must not reach another host.
func apiKey(p profile.Profile, base string, llm LLM) (string, error) {
	if p.APIKeyEnv != "" {
		key := os.Getenv(p.APIKeyEnv)
		if key == "" {
			return "", fmt.Errorf("agent %s: environment variable %s (apiKeyEnv) is empty", p.ID, p.APIKeyEnv)
		}
		return key, nil
	}
	if llm.APIKey == "" || !sameOrigin(base, llm.BaseURL) {
		return "", nil
	}
	return llm.APIKey, nil
}

// sameOrigin reports whether two URLs have the same scheme, host and port
// (a missing port is the scheme's default). Unparsable URLs match nothing.
func sameOrigin(a, b string) bool {
	oa, okA := origin(a)
	ob, okB := origin(b)
	return okA && okB && oa == ob
}

// origin returns the scheme://host:port of raw, lower-cased.
func origin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port, true
}
