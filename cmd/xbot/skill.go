package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/services/engine/skills"
)

const skillUsage = `usage:
  xbot skill add [--version V] [--skills-dir D] <directory | .tar | .tar.gz | .zip>
  xbot skill list [--json] [--skills-dir D]`

// runSkill adds a skill version to the skill store or lists the store.
func runSkill(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(skillUsage)
	}
	switch args[0] {
	case "add":
		return skillAdd(args[1:], out)
	case "list":
		return skillList(args[1:], out)
	}
	return errors.New(skillUsage)
}

// skillFlags parses a skill command's flags (every setting, plus extra);
// the positional arguments are returned.
func skillFlags(name string, args []string, extra func(*flag.FlagSet)) (*settings, []string, error) {
	fs := flag.NewFlagSet("xbot skill "+name, flag.ContinueOnError)
	set := config.BindFlags(fs)
	extra(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	s, err := settingsFrom(set(), "console")
	if err != nil {
		return nil, nil, err
	}
	return s, fs.Args(), nil
}

func skillAdd(args []string, out io.Writer) error {
	var version string
	s, rest, err := skillFlags("add", args, func(fs *flag.FlagSet) {
		fs.StringVar(&version, "version", "", "the skill's version when its SKILL.md declares none")
	})
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return errors.New(skillUsage)
	}
	store, err := s.skillStore()
	if err != nil {
		return err
	}
	v, added, err := store.Add(rest[0], version)
	if err != nil {
		return err
	}
	state := "added"
	if !added {
		state = "already stored with the same content:"
	}
	_, err = fmt.Fprintf(out, "%s %s (%s, %d files, %d bytes) in %s\n", state, v.ID, v.Digest, v.Files, v.Bytes, store.Dir())
	return err
}

func skillList(args []string, out io.Writer) error {
	var asJSON bool
	s, rest, err := skillFlags("list", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	})
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return errors.New(skillUsage)
	}
	store, err := s.skillStore()
	if err != nil {
		return err
	}
	vs, err := store.List()
	if err != nil {
		return err
	}
	if asJSON {
		if vs == nil {
			vs = []skills.Version{}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(vs)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "ID\tDIGEST\tFILES\tBYTES\tADDED\tDESCRIPTION")
	for _, v := range vs {
		_, _ = fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", v.ID, v.Digest[:min(len(v.Digest), 19)], v.Files, v.Bytes,
			time.UnixMilli(v.AddedAt).UTC().Format(time.RFC3339), strings.Join(strings.Fields(v.Description), " "))
	}
	return w.Flush()
}

// rootSkillsDir is the default skills_dir of a process running as root.
const rootSkillsDir = "/var/lib/xbot/skills"

// skillsDir is skills_dir, else /var/lib/xbot/skills for root (whose home
// the sandbox user cannot pass through), else ~/.xbot/skills.
func (s *settings) skillsDir() (string, error) {
	if dir := s.r.Get("skills_dir"); dir != "" {
		return dir, nil
	}
	if os.Geteuid() == 0 {
		return rootSkillsDir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("skills_dir is unset and there is no home directory: %w", err)
	}
	return filepath.Join(home, ".xbot", "skills"), nil
}

// skillStore opens the skill store of skills_dir.
func (s *settings) skillStore() (*skills.Store, error) {
	dir, err := s.skillsDir()
	if err != nil {
		return nil, err
	}
	return skills.New(dir, skills.Limits{})
}

// mcpSecrets are the secrets of mcp_secrets and mcp_secrets_file (the
// former wins a name given in both).
func (s *settings) mcpSecrets() (map[string]string, error) {
	out := map[string]string{}
	if path := s.r.Get("mcp_secrets_file"); path != "" {
		fromFile, err := config.ReadSecretsFile(path)
		if err != nil {
			return nil, err
		}
		for k, v := range fromFile {
			out[k] = v
		}
	}
	inline, err := config.ParseSecrets(s.r.Get("mcp_secrets"))
	if err != nil {
		return nil, err
	}
	for k, v := range inline {
		out[k] = v
	}
	return out, nil
}
