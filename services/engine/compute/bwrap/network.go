package bwrap

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strings"
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

// drainWait bounds how long a networked command's exit waits for its TCP
// data to reach pasta, in steps of 10 ms (see setupScript).
const drainWait = 300

// setupScript runs inside pasta's namespace, as its root: it installs the
// routes (from a here-document, leaving the command's stdin alone), then
// runs bwrap ("$@"). Any failure ends it before bwrap runs.
//
// pasta ends as soon as its child does, and drops what the namespace sent
// but it has not yet relayed: "echo x > /dev/tcp/host/port" as a command's
// last act lost its data about one time in four. So after bwrap exits the
// script waits, up to drainWait steps, while a TCP socket of the namespace
// is in a state with data or a FIN not yet acknowledged (ESTABLISHED,
// FIN_WAIT1, CLOSE_WAIT, LAST_ACK, CLOSING: 01 04 08 09 0B in
// /proc/net/tcp, which shows the reader's namespace). pasta acknowledges
// what it has written to its host socket, and the host's kernel delivers a
// closed socket's written data. A command without connections pays one awk.
func setupScript(ip string, allow []netip.Prefix) string {
	return "set -e\n" + shellQuote(ip) + " -4 -batch - <<'XBOT_ROUTES'\n" +
		routes(allow, hostAddrs()) + "XBOT_ROUTES\n" +
		"rc=0\n\"$@\" || rc=$?\n" +
		fmt.Sprintf("i=0\nwhile [ $i -lt %d ] && awk 'NR > 1 && $4 ~ /^(01|04|08|09|0B)$/ { f = 1 } END { exit !f }' /proc/net/tcp; do\n", drainWait) +
		"\tsleep 0.01\n\ti=$((i + 1))\ndone\nexit $rc\n"
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// networked wraps bwrap's arguments in pasta and the route setup.
func (p *Provider) networked(allowHosts []string, bwrapArgs []string) (*exec.Cmd, error) {
	if p.netErr != nil {
		return nil, p.netErr
	}
	allow, err := ParseAllowHosts(allowHosts)
	if err != nil {
		return nil, fmt.Errorf("networked sandbox: %w", err)
	}
	args := append([]string{p.pasta}, pastaArgs()...)
	args = append(args, "--", shell, "-c", setupScript(p.ip, allow), "xbot-network", p.binary)
	return &exec.Cmd{Path: p.pasta, Args: append(args, bwrapArgs...)}, nil
}
