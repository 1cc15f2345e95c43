package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/compute"
	"github.com/xbot-runtime/xbot/services/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/compute/local"
	"github.com/xbot-runtime/xbot/services/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// computeProvider builds the sandbox provider named by compute_provider. auto
// picks bwrap when it works on this machine, else local with a warning.
func (s *settings) computeProvider(dataDir string) (compute.Provider, error) {
	dir := s.r.Get("compute_dir")
	if dir == "" && dataDir != "" {
		dir = filepath.Join(dataDir, "sandboxes")
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("compute_dir is unset and there is no home directory: %w", err)
		}
		dir = filepath.Join(home, ".xbot", "sandboxes")
	}
	log := s.log.Named("compute")
	switch name := s.r.Get("compute_provider"); name {
	case "bwrap":
		return bwrap.New(bwrap.Config{Dir: dir, Logger: log})
	case "local":
		return local.New(local.Config{Dir: dir, Logger: log})
	case "auto", "":
		p, err := bwrap.New(bwrap.Config{Dir: dir, Logger: log})
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, compute.ErrUnavailable) {
			return nil, err
		}
		log.Warn("bwrap is not usable here; tools run WITHOUT isolation (install bubblewrap for sandboxing)", zap.Error(err))
		return local.New(local.Config{Dir: dir, Logger: log})
	default:
		return nil, fmt.Errorf("compute_provider %q: want bwrap, local or auto", name)
	}
}

// llm returns the configured default model and the profiles to run: with a
// real model configured, the built-in demo agent uses it and the built-in
// tools; otherwise it plays its script.
func (s *settings) llm(profiles *profile.Catalog) (stack.LLM, *profile.Catalog, error) {
	llm := stack.LLM{BaseURL: s.r.Get("llm_base_url"), APIKey: s.r.Get("llm_api_key"), Model: s.r.Get("llm_model")}
	if (llm.BaseURL == "") != (llm.Model == "") {
		return llm, nil, errors.New("set both llm_base_url and llm_model (XBOT_LLM_BASE_URL, XBOT_LLM_MODEL) to use a real model")
	}
	if !llm.Configured() {
		return llm, profiles, nil
	}
	if !profiles.IsBuiltinDemo() {
		return llm, profiles, nil // agents.yaml redefined demo; keep it
	}
	cat, err := profiles.With(profile.DemoLLM())
	return llm, cat, err
}
