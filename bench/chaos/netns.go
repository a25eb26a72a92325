package chaos

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A run with Config.Net puts each shop and the provider in a network
// namespace of its own, joined by a veth pair to a bridge in the root
// namespace, so that the partitions (partition.go) cut real packets: a
// shop's queries to PostgreSQL, its calls to the provider, the provider's
// webhooks, in one direction or both, and slow and lose them on a lossy
// link. PostgreSQL, HAProxy, the mail server and the harness stay in the
// root namespace, reached on addresses of the bridge (netns_forward.go:
// a Unix socket would be reached through the file system, past the rules).
//
// Every name carries the run's prefix, cx<pid>, so that two runs never
// collide and a later run can tell the leftovers of one that was killed
// (its pid gone) from those of one still running (sweepNetLabs). Addresses
// are 10.a.b.0/24, a and b drawn and checked against the addresses the
// machine already has. A fixed port is safe inside a namespace: the
// namespace and its address are the run's own.

// netPrefix starts every name the harness gives a bridge, veth or
// namespace.
const netPrefix = "cx"

// shopPort is the port each shop and the provider listen on in their
// namespace.
const shopPort = 8080

// netLab is a run's network.
type netLab struct {
	prefix string // cx<pid>
	subnet string // "10.a.b"
	run    func(args ...string) error
	mu     sync.Mutex
	spaces map[string]*netSpace
	closed bool
}

// netSpace is one namespace: a shop's or the provider's.
type netSpace struct {
	name     string // the namespace
	hostVeth string // its veth's end on the bridge
	ip       string
	// mu is held by a partition or a lossy link of the namespace, which
	// come one at a time.
	mu sync.Mutex
}

// The addresses on the bridge (root namespace): the gateway, where the
// harness, HAProxy and the mail server's forwarder listen; the
// provider's; PostgreSQL's forwarders, on an address of its own so that
// a rule can name it.
func (l *netLab) gateway() string { return l.subnet + ".1" }
func (l *netLab) dbIP() string    { return l.subnet + ".3" }

// spaceIP is the address of namespace i: 2 the provider, 10+i shop i.
func (l *netLab) shopIP(i int) string    { return l.subnet + "." + strconv.Itoa(10+i) }
func (l *netLab) providerIP() string     { return l.subnet + ".2" }
func (l *netLab) bridge() string         { return l.prefix + "br" }
func (l *netLab) nsName(s string) string { return l.prefix + "-" + s }

// labCommands are the commands that make the bridge.
func (l *netLab) bridgeCommands() [][]string {
	br := l.bridge()
	return [][]string{
		{"ip", "link", "add", br, "type", "bridge"},
		{"ip", "addr", "add", l.gateway() + "/24", "dev", br},
		{"ip", "addr", "add", l.dbIP() + "/32", "dev", br},
		{"ip", "link", "set", br, "up"},
	}
}

// spaceCommands are the commands that make namespace name (short: "s0",
// "p") with address ip, its veth on the bridge. Inside, the local table's
// rule is moved after the partitions' (whose preferences are below
// 1000), or packets to the namespace's own address would be delivered
// before a rule could drop them; and early demultiplexing is off, or an
// established connection's packets would skip the rules.
func (l *netLab) spaceCommands(short, ip string) [][]string {
	ns, host, peer := l.nsName(short), l.prefix+short+"h", l.prefix+short+"n"
	in := func(args ...string) []string { return append([]string{"ip", "-n", ns}, args...) }
	return [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", host, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", ns},
		{"ip", "link", "set", host, "master", l.bridge(), "up"},
		in("link", "set", peer, "name", "eth0"),
		in("addr", "add", ip+"/24", "dev", "eth0"),
		in("link", "set", "eth0", "up"),
		in("link", "set", "lo", "up"),
		in("route", "add", "default", "via", l.gateway()),
		{"ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.tcp_early_demux=0", "net.ipv4.ip_early_demux=0"},
		in("rule", "add", "pref", "1000", "lookup", "local"),
		in("rule", "del", "pref", "0", "lookup", "local"),
	}
}

// exec returns args run inside namespace ns.
func (s *netSpace) exec(args ...string) []string {
	return append([]string{"ip", "netns", "exec", s.name}, args...)
}

// runCommand runs one ip or tc command, its output in the error.
func runCommand(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startNetLab sweeps what killed runs left, then makes the bridge. It
// needs root and iproute2.
func startNetLab() (*netLab, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("network namespaces (-net) need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("network namespaces (-net) need iproute2's ip")
	}
	sweepNetLabs(runCommand)
	subnet, err := freeSubnet()
	if err != nil {
		return nil, err
	}
	l := &netLab{prefix: netPrefix + strconv.Itoa(os.Getpid()), subnet: subnet, run: runCommand, spaces: map[string]*netSpace{}}
	for _, c := range l.bridgeCommands() {
		if err := l.run(c...); err != nil {
			l.close()
			return nil, err
		}
	}
	return l, nil
}

// space makes namespace short with address ip.
func (l *netLab) space(short, ip string) (*netSpace, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &netSpace{name: l.nsName(short), hostVeth: l.prefix + short + "h", ip: ip}
	l.spaces[short] = s
	for _, c := range l.spaceCommands(short, ip) {
		if err := l.run(c...); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// close deletes every namespace (their veths, rules and qdiscs go with
// them) and the bridge. Errors are ignored: close runs however the run
// ends, on what was made.
func (l *netLab) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	for _, c := range l.closeCommands() {
		l.run(c...) //nolint:errcheck // what is not there was not made
	}
}

func (l *netLab) closeCommands() [][]string {
	var cs [][]string
	for _, s := range l.spaces {
		cs = append(cs, []string{"ip", "netns", "del", s.name}, []string{"ip", "link", "del", s.hostVeth})
	}
	return append(cs, []string{"ip", "link", "del", l.bridge()})
}

// leftover matches a name the harness gives, with the pid of its run.
var leftover = regexp.MustCompile(`^` + netPrefix + `([0-9]+)(?:br$|-|[a-z][a-z0-9]*h$)`)

// sweepCommands are the commands that delete, of the namespaces and links
// named, those of runs whose process is gone (alive says).
func sweepCommands(namespaces, links []string, alive func(pid int) bool) [][]string {
	var cs [][]string
	dead := func(name string) bool {
		m := leftover.FindStringSubmatch(name)
		if m == nil {
			return false
		}
		pid, err := strconv.Atoi(m[1])
		return err == nil && !alive(pid)
	}
	for _, ns := range namespaces {
		if dead(ns) {
			cs = append(cs, []string{"ip", "netns", "del", ns})
		}
	}
	for _, l := range links {
		if dead(l) {
			cs = append(cs, []string{"ip", "link", "del", l})
		}
	}
	return cs
}

// sweepNetLabs deletes what runs that were killed left (a SIGKILL runs no
// defer).
func sweepNetLabs(run func(args ...string) error) {
	nsOut, _ := exec.Command("ip", "netns", "list").Output()
	linkOut, _ := exec.Command("ip", "-o", "link", "show").Output()
	var namespaces, links []string
	for _, line := range strings.Split(string(nsOut), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			namespaces = append(namespaces, f[0])
		}
	}
	for _, line := range strings.Split(string(linkOut), "\n") {
		// "7: cx123br: <...>" or "8: cx123s0h@if7: <...>"
		if f := strings.Fields(line); len(f) > 1 {
			links = append(links, strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0])
		}
	}
	for _, c := range sweepCommands(namespaces, links, pidAlive) {
		run(c...) //nolint:errcheck // another sweep may have been first
	}
}

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// freeSubnet draws a 10.a.b.0/24 no address of the machine is in.
func freeSubnet() (string, error) {
	out, err := exec.Command("ip", "-o", "addr", "show").Output()
	if err != nil {
		return "", err
	}
	for range 100 {
		a, _ := rand.Int(rand.Reader, big.NewInt(50))
		b, _ := rand.Int(rand.Reader, big.NewInt(256))
		subnet := fmt.Sprintf("10.%d.%d", 200+a.Int64(), b.Int64())
		if !strings.Contains(string(out), " "+subnet+".") {
			return subnet, nil
		}
	}
	return "", errors.New("no free 10.x.y.0/24 for the run's network")
}

// startNet makes the run's network (Config.Net): the bridge, a namespace
// per shop and the provider's, and forwarders on the bridge for the
// shop's PostgreSQL (each server dbURL names) and the mail server. It
// returns the mail server's address and the database's URL as the shops
// reach them.
func (cl *cluster) startNet(dbURL string, logf func(string, ...any)) (smtpAddr, shopURL string, err error) {
	if cl.net, err = startNetLab(); err != nil {
		return "", "", err
	}
	if cl.providerSpace, err = cl.net.space("p", cl.net.providerIP()); err != nil {
		return "", "", err
	}
	for i := range cl.cfg.Instances {
		s, err := cl.net.space("s"+strconv.Itoa(i), cl.net.shopIP(i))
		if err != nil {
			return "", "", err
		}
		cl.spaces = append(cl.spaces, s)
	}
	targets, err := dbTargets(dbURL)
	if err != nil {
		return "", "", err
	}
	var addrs []string
	for _, t := range targets {
		f, err := forward(cl.net.dbIP(), t.network, t.address)
		if err != nil {
			return "", "", err
		}
		cl.forwarders = append(cl.forwarders, f)
		addrs = append(addrs, f.addr())
	}
	if shopURL, err = netDBURL(dbURL, addrs); err != nil {
		return "", "", err
	}
	f, err := forward(cl.net.gateway(), "tcp", cl.smtp.Addr())
	if err != nil {
		return "", "", err
	}
	cl.forwarders = append(cl.forwarders, f)
	logf("network %s.0/24 (%s*): the provider in %s at %s, %d shops in namespaces of their own, PostgreSQL at %s, mail at %s",
		cl.net.subnet, cl.net.prefix, cl.providerSpace.name, cl.net.providerIP(), len(cl.spaces), strings.Join(addrs, ","), f.addr())
	return f.addr(), shopURL, nil
}

// inSpace is the command line of program run in namespace s, or alone
// without one.
func (cl *cluster) inSpace(s *netSpace, program string) []string {
	if s == nil {
		return []string{program}
	}
	return s.exec(program)
}

// shopSpace is shop i's namespace, or nil.
func (cl *cluster) shopSpace(i int) *netSpace {
	if i < len(cl.spaces) {
		return cl.spaces[i]
	}
	return nil
}
