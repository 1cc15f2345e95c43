package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/compute"
	"github.com/xbot-runtime/xbot/services/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/compute/capacity"
	"github.com/xbot-runtime/xbot/services/compute/local"
	"github.com/xbot-runtime/xbot/services/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// computeProvider builds the sandbox provider named by compute_provider,
// limited by the sandbox_* keys and capped per tenant and in total.
func (s *settings) computeProvider(dataDir string) (compute.Provider, error) {
	lim, err := s.sandboxLimits()
	if err != nil {
		return nil, err
	}
	p, err := s.rawProvider(dataDir, lim)
	if err != nil {
		return nil, err
	}
	capCfg := capacity.Config{Provider: p}
	if capCfg.PerTenant, err = s.r.Int("sandbox_max_per_tenant"); err != nil {
		return nil, err
	}
	if capCfg.Total, err = s.r.Int("sandbox_max_total"); err != nil {
		return nil, err
	}
	if capCfg.Wait, err = s.r.Duration("sandbox_wait"); err != nil {
		return nil, err
	}
	return capacity.New(capCfg)
}

// sandboxLimits reads the sandbox limit keys.
func (s *settings) sandboxLimits() (bwrap.Config, error) {
	var c bwrap.Config
	var errs []error
	num := func(key string, scale int64) int64 {
		n, err := s.r.Int(key)
		errs = append(errs, err)
		return int64(n) * scale
	}
	c.Limits = compute.Limits{MemoryBytes: num("sandbox_memory_mib", 1<<20), Pids: num("sandbox_pids", 1),
		CPUMillis: num("sandbox_cpu_millis", 1), WorkspaceBytes: num("sandbox_workspace_mib", 1<<20)}
	c.LimitMechanism, c.CgroupParent = s.r.Get("sandbox_limits"), s.r.Get("sandbox_cgroup_parent")
	return c, errors.Join(errs...)
}

// rawProvider builds the provider named by compute_provider. auto picks
// bwrap when it works on this machine, else local with a warning.
func (s *settings) rawProvider(dataDir string, lim bwrap.Config) (compute.Provider, error) {
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
	bcfg := lim
	bcfg.Dir, bcfg.Logger = dir, log
	lcfg := local.Config{Dir: dir, Logger: log, Limits: lim.Limits, LimitMechanism: lim.LimitMechanism}
	switch name := s.r.Get("compute_provider"); name {
	case "bwrap":
		return bwrap.New(bcfg)
	case "local":
		return local.New(lcfg)
	case "auto", "":
		p, err := bwrap.New(bcfg)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, compute.ErrUnavailable) {
			return nil, err
		}
		log.Warn("bwrap is not usable here; tools run WITHOUT isolation (install bubblewrap for sandboxing)", zap.Error(err))
		return local.New(lcfg)
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
