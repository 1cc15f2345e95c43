package stack

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/xbot-runtime/xbot/services/executor/agentloop"
	"github.com/xbot-runtime/xbot/services/model"
	"github.com/xbot-runtime/xbot/services/model/openai"
	"github.com/xbot-runtime/xbot/services/model/scripted"
	"github.com/xbot-runtime/xbot/services/profile"
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
		key := llm.APIKey
		if p.APIKeyEnv != "" {
			key = os.Getenv(p.APIKeyEnv)
			if key == "" {
				return nil, "", fmt.Errorf("agent %s: environment variable %s (apiKeyEnv) is empty", p.ID, p.APIKeyEnv)
			}
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
