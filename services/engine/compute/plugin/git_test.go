package plugin_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

// repo commits dir's files to a new git repository (in a subdirectory
// plugin/ when sub) and returns its file:// URL and the commit.
func repo(t *testing.T, dir string, sub bool) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is needed")
		}
		t.Skip("no git")
	}
	r := t.TempDir()
	dst := r
	if sub {
		dst = filepath.Join(r, "plugin")
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", dir+"/.", dst+"/").CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	// A hook that would fire on checkout stays in the source: nothing of it travels, nothing checks out.
	git := func(args ...string) string {
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		c.Dir = r
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "plugin")
	return "file://" + r, git("rev-parse", "HEAD")
}

func TestInstallFromGit(t *testing.T) {
	t.Parallel()
	canary := filepath.Join(t.TempDir(), "canary")
	url, commit := repo(t, canaryPlugin(t, canary, manifest("gitplug", "1.0.0", "")), true)
	s := &plugin.Store{Dir: t.TempDir()}
	src := plugin.Source{GitURL: url, Subdir: "plugin"}
	if _, err := s.Install(t.Context(), src, plugin.Options{Confirm: yes}); !errors.Is(err, plugin.ErrUnsafe) {
		t.Errorf("file:// without --allow-insecure-transport: %v", err)
	}
	opt := plugin.Options{Confirm: yes, AllowInsecureTransport: true}
	if _, err := s.Install(t.Context(), src, opt); !errors.Is(err, plugin.ErrConsent) || !strings.Contains(err.Error(), commit) {
		t.Errorf("an unpinned ref, unattended: %v; want refused naming the commit to pin", err)
	}
	src.Ref = commit
	in, err := s.Install(t.Context(), src, opt)
	if err != nil {
		t.Fatal(err)
	}
	if in.Receipt.Trust != plugin.TrustPinned || in.Receipt.Source.Commit != commit || in.Receipt.Source.Subdir != "plugin" {
		t.Errorf("receipt %+v", in.Receipt)
	}
	if err := in.Verify(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "run.sh")); err != nil {
		t.Errorf("the plugin's files: %v", err)
	}
	if _, err := os.Stat(canary); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a git install ran something: %v", err)
	}
	src.Ref = ""
	if _, err := s.Install(t.Context(), src, plugin.Options{Confirm: yes, AllowInsecureTransport: true, AllowUnpinned: true, Force: true}); err != nil {
		t.Errorf("--allow-unpinned: %v", err)
	}
}

func TestGitSymlinkRefused(t *testing.T) {
	t.Parallel()
	dir := canaryPlugin(t, filepath.Join(t.TempDir(), "c"), manifest("gitlink", "1.0.0", ""))
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "lib", "passwd")); err != nil {
		t.Fatal(err)
	}
	url, commit := repo(t, dir, false)
	_, err := (&plugin.Store{Dir: t.TempDir()}).Install(t.Context(), plugin.Source{GitURL: url, Ref: commit},
		plugin.Options{Confirm: yes, AllowInsecureTransport: true})
	if !errors.Is(err, plugin.ErrUnsafe) || !strings.Contains(err.Error(), "120000") {
		t.Fatalf("a repository holding a symlink: %v, want ErrUnsafe", err)
	}
}

func TestGitURLsRefused(t *testing.T) {
	t.Parallel()
	s := &plugin.Store{Dir: t.TempDir()}
	for _, u := range []string{"https://user:token@example.com/p.git", "https://token@example.com/p.git",
		"ext::sh -c touch% /tmp/pwned", "ftp://example.com/p.git", "http://example.com/p.git", "git://example.com/p.git"} {
		_, err := s.Install(t.Context(), plugin.Source{GitURL: u}, plugin.Options{Confirm: yes})
		if !errors.Is(err, plugin.ErrUnsafe) {
			t.Errorf("%s: %v, want ErrUnsafe", u, err)
		}
		if strings.Contains(u, "token") && err != nil && strings.Contains(err.Error(), "token") {
			t.Errorf("the error repeats the URL's credentials: %v", err)
		}
	}
}

// TestGitSSHUsesTheAgent: an ssh source is fetched with the user's ssh
// agent (SSH_AUTH_SOCK), and with nothing else of the environment that
// could redirect git. Not parallel: it sets PATH (a stand-in ssh that
// records what it got).
func TestGitSSHUsesTheAgent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	got := filepath.Join(bin, "env")
	fake := "#!/bin/sh\nenv > " + got + "\nexit 128\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fake), 0o700); err != nil { // #nosec G306 -- a test program
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("SSH_AUTH_SOCK", "/run/user/agent.sock")
	t.Setenv("GIT_SSH_COMMAND", "touch /tmp/never")
	_, err := (&plugin.Store{Dir: t.TempDir()}).Install(t.Context(), plugin.Source{GitURL: "ssh://git@example.invalid/p.git"},
		plugin.Options{Confirm: yes})
	if err == nil {
		t.Fatal("an install through a failing ssh succeeded")
	}
	env, rerr := os.ReadFile(got)
	if rerr != nil {
		t.Fatalf("git did not run ssh: %v (%v)", rerr, err)
	}
	if !strings.Contains(string(env), "SSH_AUTH_SOCK=/run/user/agent.sock\n") || strings.Contains(string(env), "GIT_SSH_COMMAND") {
		t.Errorf("ssh's environment:\n%s\nwant SSH_AUTH_SOCK and no GIT_SSH_COMMAND", env)
	}
}
