package main

import (
	"sync/atomic"

	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// modelKeyVars are the environment variables the agents' model keys are
// read from (each profile's apiKeyEnv). A compute provider plugin never
// gets them, whatever its manifest passes through: they are LLM keys. The
// set follows the profiles as they are loaded and reloaded.
type modelKeyVars struct {
	names atomic.Pointer[map[string]bool]
}

// set makes the set the variables of c's profiles.
func (m *modelKeyVars) set(c *profile.Catalog) {
	names := map[string]bool{}
	for _, id := range c.IDs() {
		if p, _ := c.Get(id); p.APIKeyEnv != "" {
			names[p.APIKeyEnv] = true
		}
	}
	m.names.Store(&names)
}

// has reports whether name holds a model key (epp.Config.Withhold).
func (m *modelKeyVars) has(name string) bool {
	names := m.names.Load()
	return names != nil && (*names)[name]
}

// profiles loads the agent profiles (agents_file, and the demo agent on
// the configured model) and withholds their model keys' variables from
// provider plugins.
func (s *settings) profiles() (stack.LLM, *profile.Catalog, error) {
	profiles, err := profile.Load(s.r.Get("agents_file"))
	if err != nil {
		return stack.LLM{}, nil, err
	}
	llm, profiles, err := s.llm(profiles)
	if err != nil {
		return llm, nil, err
	}
	s.modelKeys.set(profiles)
	return llm, profiles, nil
}
