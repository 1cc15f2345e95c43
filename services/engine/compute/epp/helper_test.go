package epp_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// helperPlugin runs this test binary as a misbehaving test plugin when its
// arguments are -epp-helper MODE[,MODE…] [MARKER], and reports whether it
// did. Its modes:
//
//	proto2      answers initialize with protocol epp/2
//	slowstart   never answers initialize
//	noconnect   answers sandbox.connect with -32601
//	crash       exec.run: writes to stderr (with the setting "token"), exits 3
//	bigstderr   with crash: writes 1 MiB to stderr first
//	cutsecret   with crash: its last stderr line is the token and 2039 bytes more
//	malformed   exec.run: answers a line that is not JSON
//	longline    exec.run: answers a line over 8 MiB
//	silent      never answers exec.run, sandbox.list or files.read
//	grandchild  at initialize starts "sleep MARKER" in its process group
//	stubborn    ignores SIGTERM and the end of stdin
//	retry       sandbox.get fails retryable twice; exec.run fails retryable
//	errors      files.read of path K answers the error of kind K (or code K)
//	early       exec.start: sends the process's output and exit before its answer
//	startwait   exec.start: never answers (as if its process had started and the answer were on its way)
//	earlyflood  exec.start: sends 2 MiB of the process's output, then its exit, before its answer
//	daemon      exec.run: leaves a process outside its group that writes empty
//	            lines to its stdout for ever (with MARKER), then exits 3
//	deaf        exec.run: stops reading stdin (and never answers)
//	pause       exec.run: stops reading stdin until its data dir holds "resume", then answers
//	peek        at initialize tries to read its parent's environment (/proc/<ppid>/environ): report.json's peek
//	badid       its sandbox (listed, created) has an id of 300 bytes with an escape sequence
//	leavegroup  at start moves itself into its parent's process group
//
// It writes report.json (its environment, argv and initialize's params)
// and appends to calls.log (each method and $/cancel id) in its data dir.
func helperPlugin() bool {
	if len(os.Args) < 3 || os.Args[1] != "-epp-helper" {
		return false
	}
	h := &helper{modes: strings.Split(os.Args[2], ","), out: bufio.NewWriter(os.Stdout), data: os.Getenv("XBOT_PROVIDER_DATA_DIR")}
	if len(os.Args) > 3 {
		h.marker = os.Args[3]
	}
	h.run()
	os.Exit(0)
	return true
}

type helper struct {
	modes  []string
	marker string
	data   string
	mu     sync.Mutex
	out    *bufio.Writer
	config map[string]string
	tries  map[string]int
}

func (h *helper) is(mode string) bool { return slices.Contains(h.modes, mode) }

func (h *helper) run() {
	if h.is("stubborn") {
		signal.Ignore(syscall.SIGTERM)
	}
	if h.is("badid") {
		record["sandbox_id"] = "bad\x1b[2J" + strings.Repeat("x", 300)
	}
	if h.is("leavegroup") {
		if pgid, err := syscall.Getpgid(os.Getppid()); err == nil {
			_ = syscall.Setpgid(0, pgid)
		}
	}
	h.tries = map[string]int{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		h.log(m.Method, m.Params)
		if len(m.ID) > 0 {
			h.answer(m.ID, m.Method, m.Params)
		}
	}
	if h.is("stubborn") {
		select {} // until SIGKILL
	}
}

// log appends "method params" to calls.log.
func (h *helper) log(method string, params json.RawMessage) {
	f, err := os.OpenFile(filepath.Join(h.data, "calls.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		fmt.Fprintf(f, "%s %s\n", method, params)
		_ = f.Close()
	}
}

func (h *helper) send(v any) {
	line, _ := json.Marshal(v)
	h.mu.Lock()
	defer h.mu.Unlock()
	_, _ = h.out.Write(append(line, '\n'))
	_ = h.out.Flush()
}

func (h *helper) result(id json.RawMessage, r any) {
	h.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": r, "unknown_field": true})
}

func (h *helper) fail(id json.RawMessage, code int, kind string, retryable bool, details any) {
	data := map[string]any{"kind": kind, "retryable": retryable, "details": details}
	h.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": "failed: " + kind, "data": data}})
}

var record = map[string]any{"sandbox_id": "fake-1", "status": "running", "metadata": map[string]string{}}

func (h *helper) answer(id json.RawMessage, method string, params json.RawMessage) {
	switch method {
	case "initialize":
		h.initialize(id, params)
	case "shutdown":
		h.result(id, map[string]any{})
	case "sandbox.list":
		if !h.is("silent") {
			var p struct {
				Metadata map[string]string `json:"metadata"`
			}
			_ = json.Unmarshal(params, &p)
			record["metadata"] = p.Metadata
			h.result(id, map[string]any{"sandboxes": []any{record}})
		}
	case "sandbox.create":
		h.result(id, map[string]any{"sandbox": record})
	case "sandbox.connect", "sandbox.get":
		h.sandbox(id, method, params)
	case "sandbox.kill":
		h.result(id, map[string]any{"killed": true})
	case "exec.run":
		h.execRun(id, params)
	case "exec.start":
		if h.is("startwait") {
			return
		}
		for i := 0; h.is("earlyflood") && i < 4; i++ {
			chunk := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'a' + byte(i)}, 512<<10))
			h.send(map[string]any{"jsonrpc": "2.0", "method": "exec.output", "params": map[string]string{"process_id": "p1", "stream": "stdout", "data_b64": chunk}})
		}
		h.send(map[string]any{"jsonrpc": "2.0", "method": "exec.output", "params": map[string]string{"process_id": "p1", "stream": "stdout", "data_b64": "ZWFybHkK"}})
		h.send(map[string]any{"jsonrpc": "2.0", "method": "exec.exit", "params": map[string]any{"process_id": "p1", "exit_code": 4}})
		h.result(id, map[string]string{"process_id": "p1"})
	case "files.read":
		h.filesRead(id, params)
	default:
		h.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "no " + method}})
	}
}

func (h *helper) initialize(id, params json.RawMessage) {
	if h.is("slowstart") {
		return
	}
	var p struct {
		Config map[string]string `json:"config"`
	}
	_ = json.Unmarshal(params, &p)
	h.config = p.Config
	peek := ""
	if h.is("peek") {
		_, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", os.Getppid()))
		peek = fmt.Sprint(err)
	}
	report, _ := json.Marshal(map[string]any{"env": os.Environ(), "argv": os.Args, "initialize": params, "peek": peek})
	_ = os.WriteFile(filepath.Join(h.data, "report.json"), report, 0o600)
	if h.is("grandchild") {
		_ = exec.Command("sleep", h.marker).Start() // inherits the process group
	}
	proto := "epp/1"
	if h.is("proto2") {
		proto = "epp/2"
	}
	h.result(id, map[string]any{"protocol": proto, "features": []string{"sandbox.lifecycle", "exec.run", "exec.stream", "files.rw"}})
}

func (h *helper) sandbox(id json.RawMessage, method string, params json.RawMessage) {
	var p struct {
		SandboxID string `json:"sandbox_id"`
	}
	_ = json.Unmarshal(params, &p)
	switch {
	case method == "sandbox.connect" && h.is("noconnect"):
		h.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "no connect"}})
	case h.is("retry") && h.tries[method] < 2:
		h.tries[method]++
		h.fail(id, -32000, "unavailable", true, nil)
	case p.SandboxID == "gone":
		h.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32002, "message": "no such sandbox"}})
	default:
		rec := map[string]any{"sandbox_id": p.SandboxID, "status": "running"}
		h.result(id, map[string]any{"sandbox": rec})
	}
}

func (h *helper) execRun(id json.RawMessage, params json.RawMessage) {
	switch {
	case h.is("crash"):
		if h.is("bigstderr") {
			fmt.Fprint(os.Stderr, strings.Repeat("noise\n", 200<<10))
		}
		if h.is("cutsecret") { // the 2 KiB an error shows start within the token
			fmt.Fprintf(os.Stderr, "token=%s%s\n", h.config["token"], strings.Repeat("B", 2039))
			os.Exit(3)
		}
		fmt.Fprintf(os.Stderr, "fatal: lost the connection with token=%s\n", h.config["token"])
		os.Exit(3)
	case h.is("malformed"):
		h.send("this is not an object")
	case h.is("longline"):
		h.result(id, map[string]any{"exit_code": 0, "stdout": strings.Repeat("x", 8<<20), "stderr": ""})
	case h.is("silent"):
	case h.is("deaf"):
		select {} // reads nothing more until killed
	case h.is("pause"):
		// Reads nothing until the test creates the file resume, which it
		// looks for every 10 ms.
		poll := time.NewTicker(10 * time.Millisecond)
		for _, err := os.Stat(filepath.Join(h.data, "resume")); err != nil; _, err = os.Stat(filepath.Join(h.data, "resume")) {
			<-poll.C
		}
		poll.Stop()
		h.result(id, map[string]any{"exit_code": 0, "stdout": "", "stderr": ""})
	case h.is("daemon"):
		d := exec.Command("sh", "-c", "while :; do echo; sleep 0.05; done", h.marker)
		d.Stdout, d.SysProcAttr = os.Stdout, &syscall.SysProcAttr{Setsid: true}
		_ = d.Start()
		os.Exit(3)
	case h.is("retry"):
		h.fail(id, -32000, "unavailable", true, nil)
	default:
		var p struct {
			Cmd string `json:"cmd"`
		}
		_ = json.Unmarshal(params, &p)
		h.result(id, map[string]any{"exit_code": 0, "stdout": p.Cmd, "stderr": ""})
	}
}

func (h *helper) filesRead(id json.RawMessage, params json.RawMessage) {
	var p struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(params, &p)
	switch {
	case h.is("silent"):
	case p.Path == "limit_exceeded":
		h.fail(id, -32000, p.Path, false, map[string]any{"resource": "workspace", "limit": 4096, "mechanism": "usage check"})
	case strings.HasPrefix(p.Path, "code:"):
		var code int
		_, _ = fmt.Sscanf(p.Path, "code:%d", &code)
		h.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": "bare code"}})
	default:
		h.fail(id, -32000, p.Path, false, nil)
	}
}
