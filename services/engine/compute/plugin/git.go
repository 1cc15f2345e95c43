package plugin

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// gitTimeout bounds every git command of an install.
const gitTimeout = 5 * time.Minute

// gitURL checks a git source: https://, ssh:// and host:path (scp-like)
// always, file://, git:// and http:// only when insecure; ext:: and URLs
// with credentials never. It returns the URL without a git+ prefix.
func gitURL(raw string, insecure bool) (string, error) {
	u := strings.TrimPrefix(raw, "git+")
	if strings.HasPrefix(u, "ext::") {
		return "", fmt.Errorf("%w: ext:: git URLs run commands", ErrUnsafe)
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		if host, _, scp := strings.Cut(u, ":"); scp && host != "" && !strings.Contains(host, "/") {
			return u, nil // user@host:path over ssh
		}
		return "", fmt.Errorf("%w: %q is neither a directory nor a git URL", ErrUnsafe, raw)
	}
	switch scheme {
	case "https", "ssh":
	case "file", "git", "http":
		if !insecure {
			return "", fmt.Errorf("%w: %s:// sources need --allow-insecure-transport", ErrUnsafe, scheme)
		}
	default:
		return "", fmt.Errorf("%w: git URLs are https://, ssh:// or host:path, not %s://", ErrUnsafe, scheme)
	}
	if p, err := url.Parse(u); err == nil && p.User != nil {
		if _, hasPassword := p.User.Password(); hasPassword || scheme != "ssh" {
			return "", fmt.Errorf("%w: a URL with credentials; use a credential helper or ssh-agent", ErrUnsafe)
		}
	} else if err != nil && rest == "" {
		return "", fmt.Errorf("%w: %q: %w", ErrUnsafe, raw, err)
	}
	return u, nil
}

// gitRun runs git with the hardening of a plugin install: no hooks, no
// fsmonitor, no redirects, no ext:: or (unless insecure) file protocol, no
// system or user configuration (so no insteadOf rewrite or credential
// helper), no prompt, an environment of PATH and the user's ssh agent
// (SSH_AUTH_SOCK, so that ssh sources work as for any git command) only.
type gitRun struct {
	dir, hooks, global string
	insecure           bool
}

func (g gitRun) cmd(ctx context.Context, args ...string) *exec.Cmd {
	fileAllow, protocols := "never", "https:ssh"
	if g.insecure {
		fileAllow, protocols = "always", "https:ssh:file:git:http"
	}
	full := append([]string{"-c", "core.hooksPath=" + g.hooks, "-c", "core.fsmonitor=false",
		"-c", "protocol.file.allow=" + fileAllow, "-c", "protocol.ext.allow=never", "-c", "http.followRedirects=false",
		"-c", "transfer.fsckObjects=true"}, args...)
	c := exec.CommandContext(ctx, "git", full...) // #nosec G204 -- fixed program; arguments are not interpreted by a shell
	c.Dir = g.dir
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + g.dir, "LANG=C", "GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + g.global, "GIT_ALLOW_PROTOCOL=" + protocols}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		c.Env = append(c.Env, "SSH_AUTH_SOCK="+sock)
	}
	return c
}

func (g gitRun) output(ctx context.Context, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	c := g.cmd(ctx, args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// fetchGit fetches the source's commit without checking it out and writes
// its files (below Subdir) into tree itself.
func fetchGit(ctx context.Context, src Source, tree string, insecure bool) (Origin, error) {
	u, err := gitURL(src.GitURL, insecure)
	if err != nil {
		return Origin{}, err
	}
	sub := strings.Trim(path.Clean("/"+src.Subdir), "/")
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	work := filepath.Dir(tree)
	g := gitRun{dir: filepath.Join(work, "repo"), hooks: filepath.Join(work, "hooks"), global: filepath.Join(work, "gitconfig"), insecure: insecure}
	for _, d := range []string{g.dir, g.hooks} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return Origin{}, err
		}
	}
	if err := os.WriteFile(g.global, nil, 0o600); err != nil {
		return Origin{}, err
	}
	ref := src.Ref
	if ref == "" {
		ref = "HEAD"
	}
	if _, err := g.output(ctx, "init", "-q", "--bare"); err != nil {
		return Origin{}, err
	}
	if _, err := g.output(ctx, "fetch", "-q", "--depth", "1", "--no-tags", "--no-recurse-submodules", "--", u, ref); err != nil {
		return Origin{}, err
	}
	out, err := g.output(ctx, "rev-parse", "--verify", "FETCH_HEAD^{commit}")
	if err != nil {
		return Origin{}, err
	}
	commit := strings.TrimSpace(string(out))
	if fullCommit.MatchString(src.Ref) && commit != src.Ref {
		return Origin{}, fmt.Errorf("%w: asked for commit %s, fetched %s", ErrUnsafe, src.Ref, commit)
	}
	o := Origin{Type: "git", URL: u, Ref: src.Ref, Commit: commit, Subdir: sub}
	return o, writeCommit(ctx, g, commit, sub, tree)
}

// blob is one file of the commit.
type blob struct {
	sha, rel string
	exec     bool
	size     int64
}

// writeCommit lists the commit's tree below sub, refuses anything but
// regular files, and writes them with cat-file --batch.
func writeCommit(ctx context.Context, g gitRun, commit, sub, tree string) error {
	args := []string{"ls-tree", "-r", "-z", "-l", commit}
	if sub != "" {
		args = append(args, "--", sub+"/")
	}
	out, err := g.output(ctx, args...)
	if err != nil {
		return err
	}
	blobs, err := parseTree(out, sub)
	if err != nil {
		return err
	}
	if len(blobs) == 0 {
		return fmt.Errorf("%w: the commit has no files below %q", ErrManifest, sub)
	}
	c := g.cmd(ctx, "cat-file", "--batch")
	in, err := c.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	werr := writeBlobs(in, bufio.NewReader(stdout), blobs, tree)
	_ = in.Close()
	if err := c.Wait(); werr == nil && err != nil {
		werr = fmt.Errorf("git cat-file: %w", err)
	}
	return werr
}

// parseTree reads ls-tree -r -z -l output.
func parseTree(out []byte, sub string) ([]blob, error) {
	b := newBudget()
	var blobs []blob
	for _, rec := range bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0}) {
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("git ls-tree: unexpected line")
		}
		rel := strings.TrimPrefix(string(p), sub+"/")
		if sub == "" {
			rel = string(p)
		}
		if f[0] != "100644" && f[0] != "100755" || f[1] != "blob" {
			return nil, fmt.Errorf("%w: %s has mode %s (only regular files are installed; no symlinks or submodules)", ErrUnsafe, rel, f[0])
		}
		if err := checkRel(rel); err != nil {
			return nil, err
		}
		if excluded(rel) {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("git ls-tree: size of %s", rel)
		}
		if err := b.add(rel, size); err != nil {
			return nil, err
		}
		blobs = append(blobs, blob{sha: f[2], rel: rel, exec: f[0] == "100755", size: size})
	}
	return blobs, nil
}

// checkRel refuses a path that could leave the plugin or touch git's own.
func checkRel(rel string) error {
	if !utf8.ValidString(rel) || rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%w: path %q", ErrUnsafe, rel)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." || strings.EqualFold(part, ".git") {
			return fmt.Errorf("%w: path %q", ErrUnsafe, rel)
		}
	}
	return nil
}

// writeBlobs asks cat-file for each blob and writes it below tree.
func writeBlobs(in io.Writer, out *bufio.Reader, blobs []blob, tree string) error {
	for _, bl := range blobs {
		if _, err := fmt.Fprintln(in, bl.sha); err != nil {
			return err
		}
		header, err := out.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		if f := strings.Fields(header); len(f) != 3 || f[0] != bl.sha || f[1] != "blob" || f[2] != strconv.FormatInt(bl.size, 10) {
			return fmt.Errorf("git cat-file: unexpected answer for %s", bl.rel)
		}
		target := filepath.Join(tree, filepath.FromSlash(bl.rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return err
		}
		mode := os.FileMode(0o600)
		if bl.exec {
			mode = 0o700
		}
		if err := writeFile(target, io.LimitReader(out, bl.size), mode); err != nil {
			return err
		}
		if _, err := out.ReadByte(); err != nil { // the newline after the content
			return err
		}
	}
	return nil
}
