package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

const providerUsage = `usage:
  xbot provider install <dir | git URL> [--sha256 DIGEST] [--ref REF] [--subdir DIR] [--yes] [--force]
                        [--allow-unpinned] [--allow-insecure-transport]
  xbot provider list
  xbot provider verify [ID ...]
  xbot provider remove ID [--purge]`

// console is where a provider command talks to its user.
type console struct {
	in       io.Reader
	out, err io.Writer
	// tty: a person answers on in.
	tty  bool
	home string
}

// printf writes to the user; a console that cannot be written to has
// nobody to tell.
func printf(w io.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }

func stdConsole() console {
	return console{in: os.Stdin, out: os.Stdout, err: os.Stderr, tty: term.IsTerminal(int(os.Stdin.Fd())), home: userHome()}
}

// runProvider runs xbot provider …: install, list, verify, remove.
func runProvider(ctx context.Context, args []string, c console) error {
	if len(args) == 0 {
		return errors.New(providerUsage)
	}
	st := storeIn(c.home)
	switch args[0] {
	case "install":
		return providerInstall(ctx, st, args[1:], c)
	case "list":
		return providerList(st, c)
	case "verify":
		return providerVerify(st, args[1:], c)
	case "remove":
		return providerRemove(st, args[1:], c)
	}
	return errors.New(providerUsage)
}

func providerInstall(ctx context.Context, st *plugin.Store, args []string, c console) error {
	fs := flag.NewFlagSet("xbot provider install", flag.ContinueOnError)
	fs.SetOutput(c.err)
	var src plugin.Source
	opt := plugin.Options{Interactive: c.tty, Host: plugin.Host{Name: "xbot", Version: version}}
	yes := fs.Bool("yes", false, "consent without asking (unattended); read the screen it prints")
	fs.StringVar(&opt.SHA256, "sha256", "", "the tree digest the source must have (pins it)")
	fs.StringVar(&src.Ref, "ref", "", "git: the branch, tag or full commit (a full commit pins it)")
	fs.StringVar(&src.Subdir, "subdir", "", "git: the plugin's directory in the repository")
	fs.BoolVar(&opt.Force, "force", false, "replace an installed provider of the same id (an update)")
	fs.BoolVar(&opt.AllowUnpinned, "allow-unpinned", false, "git: accept a branch or tag unattended")
	fs.BoolVar(&opt.AllowInsecureTransport, "allow-insecure-transport", false, "git: accept file://, git:// and http://")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(providerUsage)
	}
	if fi, err := os.Stat(fs.Arg(0)); err == nil && fi.IsDir() {
		src.Dir = fs.Arg(0)
	} else {
		src.GitURL = fs.Arg(0)
	}
	opt.Confirm = confirmer(c, *yes)
	opt.Check = func(m *plugin.Manifest) error { return checkScopes(st, m) }
	in, err := st.Install(ctx, src, opt)
	if err != nil {
		return err
	}
	printf(c.out, "installed %s %s (sha256:%s, %s)\nuse it with compute_provider=%s; its settings: xbot config explain\n",
		in.ID(), plugin.Printable(in.Manifest.Provider.Version), in.Receipt.TreeSHA256, in.Receipt.Trust, in.ID())
	return nil
}

// reorder puts flags before the source argument (flag stops at the first
// argument).
func reorder(args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && i+1 < len(args) && (name == "sha256" || name == "ref" || name == "subdir") {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(flags, rest...)
}

// confirmer shows the consent screen and asks: --yes consents, a person
// at a terminal answers, anything else gives no consent.
func confirmer(c console, yes bool) func(string) (bool, error) {
	return func(screen string) (bool, error) {
		printf(c.err, "%s", screen)
		switch {
		case yes:
			printf(c.err, "Consented with --yes.\n")
			return true, nil
		case !c.tty:
			return false, fmt.Errorf("%w: nobody to ask; read the screen above and run again with --yes", plugin.ErrConsent)
		}
		printf(c.err, "Install and trust this provider? [y/N] ")
		answer, _ := bufio.NewReader(c.in).ReadString('\n')
		a := strings.ToLower(strings.TrimSpace(answer))
		return a == "y" || a == "yes", nil
	}
}

// checkScopes refuses a manifest whose settings' variables would collide
// with xbot's or another provider's.
func checkScopes(st *plugin.Store, m *plugin.Manifest) error {
	var scopes []config.Scope
	for _, sc := range storeScopes(st, func(error) {}) {
		if sc.ID != m.Provider.ID {
			scopes = append(scopes, sc)
		}
	}
	return config.CheckScopes(append(scopes, scopeOf(m)))
}

func providerList(st *plugin.Store, c console) error {
	all, err := st.List()
	tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	printf(tw, "ID\tVERSION\tTRUST\tDIGEST\tFEATURES\tSOURCE\n")
	for _, in := range all {
		r := in.Receipt
		src := r.Source.Path
		if r.Source.Type == "git" {
			src = r.Source.URL + "@" + r.Source.Commit[:min(12, len(r.Source.Commit))]
		}
		printf(tw, "%s\t%s\t%s\tsha256:%s\t%s\t%s\n", in.ID(), plugin.Printable(r.Version), r.Trust, r.TreeSHA256[:min(12, len(r.TreeSHA256))],
			strings.Join(in.Manifest.Features.Supported, ","), plugin.Printable(src))
	}
	if ferr := tw.Flush(); ferr != nil {
		return ferr
	}
	return err
}

func providerVerify(st *plugin.Store, ids []string, c console) error {
	if len(ids) == 0 {
		all, err := st.List()
		if err != nil {
			return err
		}
		for _, in := range all {
			ids = append(ids, in.ID())
		}
	}
	var errs []error
	for _, id := range ids {
		in, err := st.Get(id)
		if err == nil {
			err = in.Verify()
		}
		if err != nil {
			errs = append(errs, err)
			printf(c.out, "%s: FAILED: %v\n", id, err)
			continue
		}
		printf(c.out, "%s: ok (sha256:%s, %s)\n", id, in.Receipt.TreeSHA256, in.Receipt.Trust)
	}
	return errors.Join(errs...)
}

func providerRemove(st *plugin.Store, args []string, c console) error {
	fs := flag.NewFlagSet("xbot provider remove", flag.ContinueOnError)
	fs.SetOutput(c.err)
	purge := fs.Bool("purge", false, "also remove its saved settings ([providers.<id>] in ~/.xbot/config.toml, its variables in ~/.xbot/.env)")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(providerUsage)
	}
	id := fs.Arg(0)
	var scope *config.Scope
	for _, sc := range storeScopes(st, func(error) {}) {
		if sc.ID == id {
			scope = &sc
		}
	}
	if err := st.Remove(id, *purge); err != nil {
		return err
	}
	printf(c.out, "removed %s\n", id)
	if !*purge || scope == nil {
		printf(c.out, "its saved settings stay; xbot provider remove %s --purge removes them\n", id)
		return nil
	}
	removed, err := config.PurgeScope(c.home, *scope)
	for _, where := range removed {
		printf(c.out, "removed its setting at %s\n", where)
	}
	return err
}
