package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// computeProvider builds the sandbox provider from the compute_* and
// sandbox_* keys (stack.NewCompute chooses and limits it).
func (s *settings) computeProvider(dataDir string) (compute.Provider, error) {
	c, err := s.compute(dataDir)
	if err != nil {
		return nil, err
	}
	return stack.NewCompute(c)
}

// compute reads the compute and sandbox keys.
func (s *settings) compute(dataDir string) (stack.Compute, error) {
	dir, err := s.computeDir(dataDir)
	if err != nil {
		return stack.Compute{}, err
	}
	c := stack.Compute{Provider: s.r.Get("compute_provider"), Dir: dir, AllowUnisolated: s.dev,
		LimitMechanism: s.r.Get("sandbox_limits"), CgroupParent: s.r.Get("sandbox_cgroup_parent"),
		Logger: s.log.Named("compute")}
	var errs []error
	if !slices.Contains(builtinProviders, c.Provider) {
		c.Plugin, err = s.pluginConfig(c.Provider)
		errs = append(errs, err)
	}
	num := func(key string) int {
		n, err := s.r.Int(key)
		errs = append(errs, err)
		return n
	}
	c.Limits = compute.Limits{MemoryBytes: int64(num("sandbox_memory_mib")) << 20, Pids: int64(num("sandbox_pids")),
		CPUMillis: int64(num("sandbox_cpu_millis")), WorkspaceBytes: int64(num("sandbox_workspace_mib")) << 20}
	c.PerTenant, c.Total = num("sandbox_max_per_tenant"), num("sandbox_max_total")
	if c.Wait, err = s.r.Duration("sandbox_wait"); err != nil {
		errs = append(errs, err)
	}
	for _, id := range []struct {
		key string
		to  *int
	}{{"sandbox_uid", &c.UID}, {"sandbox_gid", &c.GID}} {
		n, err := strconv.Atoi(s.r.Get(id.key))
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s %q: want a positive number (never 0, root)", id.key, s.r.Get(id.key)))
		}
		*id.to = n
	}
	return c, errors.Join(errs...)
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
