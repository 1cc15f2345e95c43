package web_test

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/xbot-runtime/xbot/services/imgateway/web"
)

// servedPage serves Files as a gateway would (index.html at the mount path,
// the rest beside it) and returns the page's HTML as fetched.
func servedPage(t *testing.T) (srv *httptest.Server, page string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sandbox", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, web.Files, web.Page)
	})
	mux.Handle("GET /sandbox/", http.StripPrefix("/sandbox/", http.FileServerFS(web.Files)))
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/sandbox?token=t", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /sandbox: %d %s %v", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	return srv, string(b)
}

// TestPageLoadsOnlyWhatFilesHold: every src and href of the page is in
// Files, nothing is loaded from elsewhere (no CDN, no fonts), and the
// styles import nothing.
func TestPageLoadsOnlyWhatFilesHold(t *testing.T) {
	t.Parallel()
	_, page := servedPage(t)
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	refs := references(doc)
	for _, ref := range refs {
		u, err := url.Parse(ref)
		if err == nil && u.Scheme == "data" {
			continue // inline, as the page itself
		}
		if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(ref, "//") {
			t.Errorf("the page loads %q from outside the gateway", ref)
			continue
		}
		name := strings.TrimPrefix(u.Path, "/")
		if _, err := fs.Stat(web.Files, name); err != nil {
			t.Errorf("the page loads %q, which Files does not hold: %v", ref, err)
		}
	}
	if m := regexp.MustCompile(`@import|url\(|https?://`).FindString(page); m != "" {
		t.Errorf("the page refers to something outside itself: %q", m)
	}
	t.Logf("references to assets: %v", refs)
}

// references returns the src and href attributes of doc's elements (links
// inside the page, #…, are not loads).
func references(n *html.Node) []string {
	var out []string
	if n.Type == html.ElementNode {
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "#") {
				out = append(out, a.Val)
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, references(c)...)
	}
	return out
}

// TestPageHasItsControls: the page holds the elements its script drives.
func TestPageHasItsControls(t *testing.T) {
	t.Parallel()
	_, page := servedPage(t)
	for _, id := range []string{"status", "reconnect", "endpoint", "can-execute", "shell-isolation", "working-directory",
		"chooser", "conv-type", "conv-id", "conversations", "log", "compose", "prompt", "send"} {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("the page has no #%s", id)
		}
	}
}

// TestPageScriptParses checks the page's script with node --check, when
// node is installed.
func TestPageScriptParses(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	_, page := servedPage(t)
	start, end := strings.Index(page, "<script>"), strings.LastIndex(page, "</script>")
	if start < 0 || end < start {
		t.Fatal("the page has no inline script")
	}
	file := filepath.Join(t.TempDir(), "page.js")
	if err := os.WriteFile(file, []byte(page[start+len("<script>"):end]), 0o600); err != nil {
		t.Fatal(err)
	}
	// A syntax check reads one file: seconds at most, even on a loaded machine.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, node, "--check", file).CombinedOutput(); err != nil {
		t.Fatalf("node --check: %v\n%s", err, out)
	}
}
