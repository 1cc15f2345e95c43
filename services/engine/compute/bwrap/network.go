package bwrap

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

// A networked sandbox gets a network namespace of its own, connected to the
// outside by pasta (Debian package passt): pasta relays the namespace's
// TCP, UDP and ICMP through ordinary sockets of the host, as the sandbox
// user. Inside, the namespace has these fixed addresses (the host's own
// addresses are then remote, and blocked); nsGateway is only a next hop.
const (
	nsIface   = "xbot0"
	nsAddress = "10.237.0.2"
	nsGateway = "10.237.0.1"
)

// blockedRanges are unreachable from a networked sandbox unless a profile's
// allow-list names an address in them: this host and its loopback,
// private networks (where the runtime's own servers live), link-local
// (cloud metadata at 169.254.169.254), carrier-grade NAT, and ranges that
// are not on the public internet. IPv6 is not offered at all.
var blockedRanges = []string{
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
	"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
}

// pastaArgs are pasta's options: no port is forwarded in either direction
// (-t/-u/-T/-U none: in particular the host's loopback ports stay out of
// reach), the gateway is not mapped to the host (--no-map-gw), IPv4 only,
// logs go nowhere (they would mix with the command's stderr), and pasta
// stays in the foreground, in the command's process group.
func pastaArgs() []string {
	return []string{"-f", "-q", "-l", "/dev/null", "--config-net", "-4",
		"-t", "none", "-u", "none", "-T", "none", "-U", "none", "--no-map-gw",
		"-I", nsIface, "-a", nsAddress, "-n", "32", "-g", nsGateway}
}

// ParseAllowHosts checks an allow-list of IPv4 addresses and CIDRs and
// returns them as prefixes.
func ParseAllowHosts(hosts []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	var errs []error
	for _, h := range hosts {
		p, err := netip.ParsePrefix(h)
		if err != nil {
			a, aerr := netip.ParseAddr(h)
			if aerr != nil {
				errs = append(errs, fmt.Errorf("allowHosts: %q is neither an IPv4 address nor a CIDR", h))
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if !p.Addr().Is4() {
			errs = append(errs, fmt.Errorf("allowHosts: %q: only IPv4 is supported", h))
			continue
		}
		out = append(out, p.Masked())
	}
	return out, errors.Join(errs...)
}

// routes is the ip -batch input that confines the namespace: the default
// route to pasta, a prohibit route for every blocked range and every
// address of this host, and a route to pasta for each allowed prefix,
// which, being more specific or equal, wins over a prohibit route.
func routes(allow []netip.Prefix, hostAddrs []string) string {
	var b strings.Builder
	b.WriteString("route flush table main\n")
	fmt.Fprintf(&b, "route add default via %s dev %s onlink\n", nsGateway, nsIface)
	for _, r := range append(blockedRanges[:len(blockedRanges):len(blockedRanges)], hostAddrs...) {
		fmt.Fprintf(&b, "route replace prohibit %s\n", r)
	}
	for _, p := range allow {
		fmt.Fprintf(&b, "route replace %s via %s dev %s onlink\n", p, nsGateway, nsIface)
	}
	return b.String()
}

// hostAddrs are this host's IPv4 addresses as /32 prefixes, read at each
// launch because interfaces come and go.
func hostAddrs() []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil // the blocked ranges still cover loopback and private addresses
	}
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			out = append(out, n.IP.To4().String()+"/32")
		}
	}
	return out
}

// drainWait bounds how long a namespace that is asked to end waits for
// its TCP data to reach pasta, in steps of 10 ms (see holdScript).
const drainWait = 300

// holdScript runs inside pasta's namespace, as its root, and holds it for
// the box's commands: it installs the routes (from a here-document),
// writes "ready" and waits until its standard input ends, which the
// executor's end of the pipe does when the box closes, or when the
// executor itself ends. Any failure ends it before it is ready.
//
// pasta ends as soon as its child does, and drops what the namespace sent
// but it has not yet relayed: "echo x > /dev/tcp/host/port" as a command's
// last act lost its data about one time in four when each command had a
// pasta of its own. A namespace outlives its commands, so only its end can
// cut a connection short: before it ends the script waits, up to drainWait
// steps, while a TCP socket of the namespace is in a state with data or a
// FIN not yet acknowledged (ESTABLISHED, FIN_WAIT1, CLOSE_WAIT, LAST_ACK,
// CLOSING: 01 04 08 09 0B in /proc/net/tcp, which shows the reader's
// namespace). pasta acknowledges what it has written to its host socket,
// and the host's kernel delivers a closed socket's written data.
func holdScript(ip string, allow []netip.Prefix, hostAddrs []string) string {
	return "set -e\n" + shellQuote(ip) + " -4 -batch - <<'XBOT_ROUTES'\n" +
		routes(allow, hostAddrs) + "XBOT_ROUTES\n" +
		"echo ready\nread -r _ || :\n" +
		fmt.Sprintf("i=0\nwhile [ $i -lt %d ] && awk 'NR > 1 && $4 ~ /^(01|04|08|09|0B)$/ { f = 1 } END { exit !f }' /proc/net/tcp; do\n", drainWait) +
		"\tsleep 0.01\n\ti=$((i + 1))\ndone\n"
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// namespace is a networked box's network namespace behind pasta: its
// holder's user and network namespaces, which each command of the box
// enters (joined).
type namespace struct {
	user, net *os.File
}

// dup returns copies of the namespace's descriptors for one command.
func (ns *namespace) dup() ([]*os.File, error) {
	var files []*os.File
	for _, f := range []*os.File{ns.user, ns.net} {
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			closeAll(files)
			return nil, fmt.Errorf("networked sandbox: %w", err)
		}
		files = append(files, os.NewFile(uintptr(fd), f.Name()))
	}
	return files, nil
}

// namespaceKey names what a namespace was set up for: a host address
// that appeared or went away since needs a namespace with other routes.
func namespaceKey(allow []netip.Prefix, hostAddrs []string) string {
	var b strings.Builder
	for _, p := range allow {
		b.WriteString(p.String())
		b.WriteByte(' ')
	}
	b.WriteByte('|')
	for _, a := range hostAddrs {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	return b.String()
}

// maxHoldOutput bounds what is kept of a namespace's output for the error
// of one that does not become ready.
const maxHoldOutput = 4 << 10

// startNamespace returns the start of a box's namespace (a
// sandbox.Companion): pasta, running holdScript as the sandbox user, its
// output read until it is ready and then discarded.
func (p *Provider) startNamespace(allow []netip.Prefix, hostAddrs []string) func(firstFD int) (*sandbox.Companion, error) {
	return func(int) (*sandbox.Companion, error) {
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("networked sandbox: %w", err)
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			closeAll([]*os.File{inR, inW})
			return nil, fmt.Errorf("networked sandbox: %w", err)
		}
		args := append([]string{p.pasta}, pastaArgs()...)
		args = append(args, "--", shell, "-c", holdScript(p.ip, allow, hostAddrs), "xbot-network")
		cmd := &exec.Cmd{Path: p.pasta, Args: args, Env: []string{}, Dir: "/", Stdin: inR, Stdout: outW, Stderr: outW}
		p.id.credential(cmd)
		ns := &namespace{}
		var closeIn, closeStarted sync.Once
		stop := func() { closeIn.Do(func() { _ = inW.Close() }) }
		started := func() { closeStarted.Do(func() { closeAll([]*os.File{inR, outW}) }) }
		ready := make(chan error, 1)
		c := &sandbox.Companion{Cmd: cmd, State: ns, Stop: stop,
			Ready: func(ctx context.Context, pid int) error {
				started()
				go readHolder(outR, ready)
				select {
				case err := <-ready:
					if err != nil {
						return fmt.Errorf("networked sandbox: %w: %s", err, netHint)
					}
				case <-ctx.Done():
					return fmt.Errorf("networked sandbox: pasta's namespace was not ready in time: %w", ctx.Err())
				}
				return ns.open(pid)
			},
			Release: func() {
				started()
				stop()
				closeAll([]*os.File{ns.user, ns.net})
			},
		}
		return c, nil
	}
}

// readHolder reads the holder's output: nil on ready once it wrote
// "ready", else an error with what it wrote before it ended; then it reads
// on until the end, so that a later write never fails.
func readHolder(out *os.File, ready chan<- error) {
	defer func() { _ = out.Close() }()
	r := bufio.NewReader(out)
	var said strings.Builder
	for {
		line, err := r.ReadString('\n')
		if line == "ready\n" {
			ready <- nil
			_, _ = io.Copy(io.Discard, r)
			return
		}
		if said.Len() < maxHoldOutput {
			said.WriteString(line[:min(len(line), maxHoldOutput-said.Len())])
		}
		if err != nil {
			ready <- fmt.Errorf("pasta's namespace ended before it was ready: %s", strings.TrimSpace(said.String()))
			return
		}
	}
}

// open takes the namespaces of pasta's child, the holder: pasta (pid)
// forks it into new user, network and PID namespaces, and it is pasta's
// only child. The holder is checked to be pasta's child again once its
// namespaces are open, so that they cannot be another process's that took
// its process ID.
func (ns *namespace) open(pid int) error {
	holder, err := onlyChild(pid)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		to   **os.File
	}{{"user", &ns.user}, {"net", &ns.net}} {
		fd, err := unix.Open("/proc/"+strconv.Itoa(holder)+"/ns/"+f.name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("networked sandbox: open the namespace: %w", err)
		}
		*f.to = os.NewFile(uintptr(fd), f.name+" namespace")
	}
	if again, err := onlyChild(pid); err != nil || again != holder {
		return fmt.Errorf("networked sandbox: pasta's namespace ended as it was opened")
	}
	return nil
}

// onlyChild is process pid's only child.
func onlyChild(pid int) (int, error) {
	p := strconv.Itoa(pid)
	data, err := os.ReadFile("/proc/" + p + "/task/" + p + "/children")
	if err != nil {
		return 0, fmt.Errorf("networked sandbox: find pasta's namespace: %w", err)
	}
	f := strings.Fields(string(data))
	if len(f) != 1 {
		return 0, fmt.Errorf("networked sandbox: pasta (process %d) has %d children, want its namespace's holder alone", pid, len(f))
	}
	return strconv.Atoi(f[0])
}

// joined builds a command of a networked box: nsenter enters the box's
// namespace (its user namespace first, which the sandbox user owns, then
// its network; the sandbox user is that user namespace's root, as pasta's
// child is), and a shell closes the two descriptors before it runs bwrap
// with the arguments build returns. The descriptors are the first of the
// launcher's extra files, so the shell can name them; bwrap's own follow.
func (p *Provider) joined(first int, ns []*os.File, build func(x extraFiles) []string) (*exec.Cmd, error) {
	x := p.openExtraFiles(first + len(ns))
	user, net := strconv.Itoa(first), strconv.Itoa(first+1)
	args := []string{p.nsenter, "--preserve-credentials", "--user=/proc/self/fd/" + user, "--net=/proc/self/fd/" + net,
		"--", shell, "-c", `exec "$@" ` + user + `<&- ` + net + `<&-`, "xbot-network", p.binary}
	cmd := &exec.Cmd{Path: p.nsenter, Args: append(args, build(x)...)}
	return p.finish(cmd, ns, x)
}

// launchNetworked builds a command of a networked box, in the box's
// namespace (started with its first command, or again once the host's
// addresses changed or it ended).
func (p *Provider) launchNetworked(l sandbox.Launch) (*exec.Cmd, error) {
	if p.netErr != nil {
		return nil, p.netErr
	}
	allow, err := ParseAllowHosts(l.AllowHosts)
	if err != nil {
		return nil, fmt.Errorf("networked sandbox: %w", err)
	}
	addrs := hostAddrs()
	var ns []*os.File
	err = l.Companion(namespaceKey(allow, addrs), p.startNamespace(allow, addrs), func(c *sandbox.Companion) error {
		var err error
		ns, err = c.State.(*namespace).dup()
		return err
	})
	if err != nil {
		return nil, err
	}
	return p.joined(l.FirstFD, ns, func(x extraFiles) []string { return p.args(l, x) })
}
