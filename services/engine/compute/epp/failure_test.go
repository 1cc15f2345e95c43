package epp_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
)

// newMarker is an argument no other process carries.
func newMarker() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "m" + hex.EncodeToString(b)
}

// sleepMarker is a sleep duration of 600 s whose digits no other process
// carries in its command line.
func sleepMarker() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("600.%010d", uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8|uint32(b[3]))
}

// execFails opens a sandbox of the test plugin in modes and returns the
// error of a command.
func execFails(t *testing.T, modes, marker string) (compute.Sandbox, error) {
	t.Helper()
	sb := open(t, newReference(t, helperConfig(t, modes, marker)), spec)
	_, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"})
	if err == nil {
		t.Fatalf("Exec succeeded on a plugin in mode %s", modes)
	}
	return sb, err
}

func TestCrashMidCall(t *testing.T) {
	t.Parallel()
	marker := newMarker()
	sb, err := execFails(t, "crash", marker)
	var ee *epp.ExitError
	if !errors.Is(err, compute.ErrSandboxLost) || !errors.Is(err, epp.ErrPluginExited) || !errors.As(err, &ee) {
		t.Fatalf("Exec when the plugin dies mid-call: %v, want an ExitError wrapping ErrSandboxLost", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "exit status 3") || !strings.Contains(msg, "fatal: lost the connection with token=***") {
		t.Errorf("the error does not show how the plugin ended and its stderr: %s", msg)
	}
	if strings.Contains(msg, secretToken) {
		t.Errorf("the plugin's secret setting reached the error: %s", msg)
	}
	if _, _, err := sb.ReadFile(t.Context(), "f", 0); !errors.Is(err, compute.ErrSandboxLost) {
		t.Errorf("a call after the crash: %v, want ErrSandboxLost", err)
	}
	waitGone(t, marker)
}

func TestStderrKeptBounded(t *testing.T) {
	t.Parallel()
	cfg := helperConfig(t, "crash,bigstderr", "")
	cfg.Logger = zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)) // not 200,000 lines of debug
	sb := open(t, newReference(t, cfg), spec)
	_, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"})
	var ee *epp.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Exec: %v", err)
	}
	if len(ee.Stderr) > 2<<10 || !strings.HasSuffix(ee.Stderr, "token=***") || !strings.HasPrefix(ee.Stderr, "noise") {
		t.Errorf("stderr shown: %d bytes ending %q; want at most 2 KiB, whole lines, ending with the last one",
			len(ee.Stderr), ee.Stderr[max(0, len(ee.Stderr)-40):])
	}
}

// TestStderrShownWithoutPartOfASecret: the end of stderr a crash shows is
// cut from the redacted text, so that it never starts within a secret.
func TestStderrShownWithoutPartOfASecret(t *testing.T) {
	t.Parallel()
	_, err := execFails(t, "crash,cutsecret", "")
	var ee *epp.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Exec: %v", err)
	}
	if tail := secretToken[len(secretToken)-8:]; strings.Contains(ee.Stderr, tail) {
		t.Errorf("the stderr shown holds the end of the secret (%q): %.40q…", tail, ee.Stderr)
	}
}

func TestMalformedAndOverlongLinesKillThePlugin(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"malformed", "longline"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			marker := newMarker()
			_, err := execFails(t, mode, marker)
			if !errors.Is(err, epp.ErrProtocol) || !errors.Is(err, compute.ErrSandboxLost) {
				t.Fatalf("Exec: %v, want ErrProtocol and ErrSandboxLost", err)
			}
			if !strings.Contains(err.Error(), "was killed") {
				t.Errorf("%v: does not say the plugin was killed", err)
			}
			waitGone(t, marker)
		})
	}
}

func TestProcessGroupKilled(t *testing.T) {
	t.Parallel()
	for _, modes := range []string{"grandchild", "grandchild,crash", "grandchild,stubborn"} {
		t.Run(modes, func(t *testing.T) {
			t.Parallel()
			marker := newMarker()
			p := newReference(t, helperConfig(t, modes, marker))
			// New's session started (and ended) one sleep already.
			waitGone(t, marker)
			sb, err := p.Open(t.Context(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(modes, "crash") {
				start := time.Now()
				_ = sb.Close()
				t.Logf("Close took %v", time.Since(start))
			} else {
				_, _ = sb.Exec(t.Context(), compute.ExecRequest{Command: "true"})
			}
			waitGone(t, marker)
			_ = sb.Close()
		})
	}
}

// TestErrorMappingTable: each error kind and bare code a plugin answers
// becomes the typed error docs/providers.md lists.
func TestErrorMappingTable(t *testing.T) {
	t.Parallel()
	s := spec
	s.SandboxID = "fake-1"
	p := newReference(t, helperConfig(t, "errors", ""))
	for path, want := range map[string][]error{
		"sandbox_not_found":     {epp.ErrSandboxNotFound, compute.ErrSandboxLost},
		"file_not_found":        {compute.ErrNotFound},
		"path_outside":          {compute.ErrPathOutside},
		"permission_denied":     {fs.ErrPermission},
		"limit_exceeded":        {compute.ErrLimit},
		"feature_not_supported": {epp.ErrFeatureNotSupported},
		"invalid_argument":      {epp.ErrInvalid},
		"timeout":               {epp.ErrTimeout},
		"unavailable":           {compute.ErrUnavailable},
		"code:-32601":           {epp.ErrFeatureNotSupported},
		"code:-32002":           {epp.ErrSandboxNotFound, compute.ErrSandboxLost},
		"code:-32602":           {epp.ErrInvalid},
		"code:-32001":           {epp.ErrInvalid},
		"code:-32000":           {epp.ErrProvider},
		"some_future_kind":      {epp.ErrProvider},
	} {
		sb := open(t, p, s) // a handle of its own: a lost sandbox stays lost
		_, _, err := sb.ReadFile(t.Context(), path, 0)
		for _, w := range append(want, epp.ErrProvider) {
			if !errors.Is(err, w) {
				t.Errorf("%s: %v is not %v", path, err, w)
			}
		}
		if path == "file_not_found" && errors.Is(err, compute.ErrSandboxLost) {
			t.Errorf("a missing file is not a lost sandbox: %v", err)
		}
	}
	_, _, err := open(t, p, s).ReadFile(t.Context(), "limit_exceeded", 0)
	var le *compute.LimitError
	if !errors.As(err, &le) || le.Resource != compute.ResourceWorkspace || le.Limit != 4096 || le.Mechanism != "usage check" {
		t.Errorf("limit_exceeded: %v (%+v), want the LimitError of its details", err, le)
	}
}

// TestUnusableSandboxIDRefused: a sandbox id the run would record (in an
// event) and show must be 1-256 bytes without control characters; a listed
// sandbox with another is not used, a created one fails the open.
func TestUnusableSandboxIDRefused(t *testing.T) {
	t.Parallel()
	_, err := newReference(t, helperConfig(t, "badid", "")).Open(t.Context(), spec)
	if !errors.Is(err, epp.ErrProvider) || strings.Contains(err.Error(), "\x1b") {
		t.Fatalf("Open with a plugin whose sandbox ids are unusable: %v, want ErrProvider (without the id's escape)", err)
	}
}
