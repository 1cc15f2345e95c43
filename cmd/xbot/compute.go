package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/capacity"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/profile"
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
// bwrap when it works on this machine; otherwise only `xbot dev` falls back
// to local (no isolation) with a warning, and every other command fails.
func (s *settings) rawProvider(dataDir string, lim bwrap.Config) (compute.Provider, error) {
	dir, err := s.computeDir(dataDir)
	if err != nil {
		return nil, err
	}
	log := s.log.Named("compute")
	bcfg := lim
	bcfg.Dir, bcfg.Logger = dir, log
	lcfg := local.Config{Dir: dir, Logger: log, Limits: lim.Limits, LimitMechanism: lim.LimitMechanism}
	switch name := s.r.Get("compute_provider"); name {
	case "bwrap":
		return s.bwrap(bcfg)
	case "local":
		return local.New(lcfg)
	case "auto", "":
		p, err := s.bwrap(bcfg)
		if err == nil || !errors.Is(err, compute.ErrUnavailable) {
			return p, err
		}
		if !s.dev {
			return nil, fmt.Errorf("compute_provider=auto: no sandbox can be created here, and tools never run "+
				"unisolated outside `xbot dev`: %w; or set compute_provider=local to run them WITHOUT isolation", err)
		}
		log.Warn("bwrap is not usable here; tools run WITHOUT isolation (install bubblewrap for sandboxing)", zap.Error(err))
		return local.New(lcfg)
	default:
		return nil, fmt.Errorf("compute_provider %q: want bwrap, local or auto", name)
	}
}

// rootComputeDir is the default compute_dir of an executor running as root.
const rootComputeDir = "/var/lib/xbot/sandboxes"

// computeDir is compute_dir, else <dataDir>/sandboxes, else
// /var/lib/xbot/sandboxes for root (whose home the sandbox user cannot pass
// through), else ~/.xbot/sandboxes.
func (s *settings) computeDir(dataDir string) (string, error) {
	if dir := s.r.Get("compute_dir"); dir != "" {
		return dir, nil
	}
	if dataDir != "" {
		return filepath.Join(dataDir, "sandboxes"), nil
	}
	if os.Geteuid() == 0 {
		// The sandbox user passes through /var/lib/xbot to the sandboxes
		// below it, which the provider makes 0710 for its group.
		parent := filepath.Dir(rootComputeDir)
		if err := os.MkdirAll(parent, 0o711); err != nil { // #nosec G301 -- search only, as the chmod below
			return "", fmt.Errorf("compute_dir default %s: %w", rootComputeDir, err)
		}
		if err := os.Chmod(parent, 0o711); err != nil { // #nosec G302 -- search only: nothing in it is listable
			return "", fmt.Errorf("compute_dir default %s: %w", rootComputeDir, err)
		}
		return rootComputeDir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("compute_dir is unset and there is no home directory: %w", err)
	}
	return filepath.Join(home, ".xbot", "sandboxes"), nil
}

// bwrap builds the bwrap provider of cfg with sandbox_uid and sandbox_gid.
func (s *settings) bwrap(cfg bwrap.Config) (compute.Provider, error) {
	uid, err := strconv.Atoi(s.r.Get("sandbox_uid"))
	if err != nil || uid <= 0 {
		return nil, fmt.Errorf("sandbox_uid %q: want a positive number (never 0, root)", s.r.Get("sandbox_uid"))
	}
	gid, err := strconv.Atoi(s.r.Get("sandbox_gid"))
	if err != nil || gid <= 0 {
		return nil, fmt.Errorf("sandbox_gid %q: want a positive number (never 0, root)", s.r.Get("sandbox_gid"))
	}
	cfg.UID, cfg.GID = uid, gid
	p, err := bwrap.New(cfg)
	if err != nil {
		return nil, err
	}
	return p, nil
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
