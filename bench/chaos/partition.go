package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"exactlyonce/bench/chaos/chaosdb"
)

// The partitions a run with Config.Net draws from, each cutting one
// namespace's packets with ip rules inside it (no iptables: a blackhole
// rule drops what it matches, before any route):
//
//   - a shop cut from PostgreSQL both ways, or one way: its queries
//     lost (nothing reaches the server), or the server's answers lost
//     (what it sent is done, a commit included, and the shop never
//     learns it); the shop holds leases meanwhile, as the drive keeps
//     every shop busy;
//   - a shop cut from the provider, both ways or its answers lost (the
//     charge made, the shop's call timing out): whatever call is in
//     flight is hit, a create or a confirm, and the next ones of the span;
//   - the provider's webhooks cut from the shops' front door (the
//     provider retries them; the reconciler is the safety net);
//
// and the lossy link (netem), which slows, loses and reorders a shop's
// packets both ways. Each heals after its hold.
const (
	windowPartitionDB       = "partition shop–PostgreSQL"
	windowPartitionDBOut    = "partition shop→PostgreSQL (queries lost)"
	windowPartitionDBIn     = "partition PostgreSQL→shop (answers lost)"
	windowPartitionProvider = "partition shop–provider"
	windowPartitionProvIn   = "partition provider→shop (answers lost)"
	windowPartitionWebhooks = "partition provider→front (webhooks lost)"
	windowLossyLink         = "lossy link"
)

var partitionKinds = []string{windowPartitionDB, windowPartitionDBOut, windowPartitionDBIn,
	windowPartitionProvider, windowPartitionProvIn, windowPartitionWebhooks}

// The rules' preferences, below the local table's (1000, spaceCommands).
const (
	prefFrom = 100 // packets from the peer, arriving
	prefTo   = 101 // packets to the peer, leaving
)

// cut is one set of rules in one namespace.
type cut struct {
	space *netSpace
	rules [][]string // each an ip rule's selector and action, after "ip -n NS rule add"
}

// partitionCut says what kind cuts: peer is the address cut off (the
// database's forwarders or the provider), front the webhooks' address.
func partitionCut(kind string, shop, provider *netSpace, db, prov, front string) cut {
	from := func(ip string) []string {
		return []string{"pref", strconv.Itoa(prefFrom), "from", ip, "iif", "eth0", "blackhole"}
	}
	to := func(ip string) []string { return []string{"pref", strconv.Itoa(prefTo), "to", ip, "blackhole"} }
	switch kind {
	case windowPartitionDB:
		return cut{shop, [][]string{from(db), to(db)}}
	case windowPartitionDBOut:
		return cut{shop, [][]string{to(db)}}
	case windowPartitionDBIn:
		return cut{shop, [][]string{from(db)}}
	case windowPartitionProvider:
		return cut{shop, [][]string{from(prov), to(prov)}}
	case windowPartitionProvIn:
		return cut{shop, [][]string{from(prov)}}
	case windowPartitionWebhooks:
		ip, port := hostPort(front)
		return cut{provider, [][]string{{"pref", strconv.Itoa(prefTo), "to", ip, "ipproto", "tcp", "dport", strconv.Itoa(port), "blackhole"}}}
	}
	panic("unknown partition " + kind)
}

func (c cut) commands(verb string) [][]string {
	cs := make([][]string, len(c.rules))
	for i, r := range c.rules {
		cs[i] = append([]string{"ip", "-n", c.space.name, "rule", verb}, r...)
	}
	return cs
}

// Link is a lossy link's faults.
type Link struct {
	// Delay and Jitter delay every packet; Loss (0 to 1) are dropped;
	// Reorder (0 to 1) are sent at once, ahead of the delayed ones.
	Delay, Jitter time.Duration
	Loss, Reorder float64
}

// netemCommands are tc netem's, on dev in namespace ns (empty: the root
// namespace).
func (k Link) netemCommands(ns, dev string) [][]string {
	return [][]string{append(tcIn(ns), "qdisc", "add", "dev", dev, "root", "netem",
		"delay", ms(k.Delay), ms(k.Jitter), "loss", pct(k.Loss), "reorder", pct(k.Reorder))}
}

// laneCommands do without netem, for a kernel built without it (this
// machine's: CONFIG_NET_SCH_NETEM is not set, and there are no modules):
// an HTB qdisc of three classes and a classic-BPF classifier that draws a
// random number per packet (ld rand) to pick one: 1:30, whose queue holds
// nothing, drops the share Loss; 1:20, a lane of a rate at which a
// full-sized packet takes Delay to send, takes the share 1-Reorder of
// the rest (queued, late, and overtaken by those of the fast lane); 1:10
// sends the others at once.
func (k Link) laneCommands(ns, dev string) [][]string {
	const full = 1 << 32
	loss := uint64(k.Loss * full)
	fast := loss + uint64((1-k.Loss)*k.Reorder*full)
	slowRate := max(8, int64(1500*8/max(k.Delay.Seconds(), 0.001))) // bits per second
	tc := func(args ...string) []string { return append(tcIn(ns), args...) }
	// ld rand; A < loss: drop; A < fast: fast lane; else slow lane.
	prog := fmt.Sprintf("6,32 0 0 4294963256,53 0 2 %d,53 0 2 %d,6 0 0 %d,6 0 0 %d,6 0 0 %d,",
		min(loss, full-1), min(fast, full-1), 0x10020, 0x10030, 0x10010)
	return [][]string{
		tc("qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10"),
		tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb", "rate", "1gbit"),
		tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb", "rate", strconv.FormatInt(slowRate, 10)+"bit", "ceil", strconv.FormatInt(slowRate, 10)+"bit"),
		tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:30", "htb", "rate", "8bit", "ceil", "8bit"),
		tc("qdisc", "add", "dev", dev, "parent", "1:30", "handle", "30:", "pfifo", "limit", "0"),
		tc("filter", "add", "dev", dev, "parent", "1:", "bpf", "bytecode", prog, "classid", "1:10"),
	}
}

func tcIn(ns string) []string {
	if ns == "" {
		return []string{"tc"}
	}
	return []string{"tc", "-n", ns}
}

func linkClear(ns, dev string) []string {
	return append(tcIn(ns), "qdisc", "del", "dev", dev, "root")
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
func pct(f float64) string      { return strconv.FormatFloat(100*f, 'f', -1, 64) + "%" }

// partitionOnce cuts, holds and heals one partition of a kind drawn, on a
// shop drawn, and records it in t.
func (cl *cluster) partitionOnce(ctx context.Context, rng *lockedRand, t *tally, logf func(string, ...any)) {
	kind := partitionKinds[rng.intN(len(partitionKinds))]
	hold := rng.between(cl.cfg.Partition/2, cl.cfg.Partition)
	i := rng.intN(len(cl.shops))
	shop := cl.spaces[i]
	c := partitionCut(kind, shop, cl.providerSpace, cl.net.dbIP(), cl.net.providerIP(), cl.front0)
	c.space.mu.Lock()
	defer c.space.mu.Unlock()
	started, _ := chaosdb.New(cl.db.Conn()).ChaosStartedKeys(ctx)
	what := kind + " (" + cl.shops[i].name + ")"
	if kind == windowPartitionWebhooks {
		what = kind
	}
	logf("%s for %s; %d keys started", what, hold.Round(time.Millisecond), started)
	for _, cmd := range c.commands("add") {
		if err := cl.net.run(cmd...); err != nil {
			t.fail(what, err)
			cl.healCut(c, t, what)
			return
		}
	}
	began := time.Now()
	t.count(func(d *Disruptions) {
		d.Partitions++
		if d.PartitionKinds == nil {
			d.PartitionKinds = map[string]int{}
		}
		d.PartitionKinds[kind]++
	})
	// Healed when the hold is over even if the drive ends meanwhile: what
	// the cut left hanging landing late is the point.
	time.Sleep(hold)
	cl.healCut(c, t, what)
	logf("healed: %s", what)
	t.span(kind, began)
}

func (cl *cluster) healCut(c cut, t *tally, what string) {
	for _, cmd := range c.commands("del") {
		if err := cl.net.run(cmd...); err != nil && !strings.Contains(err.Error(), "No such file") {
			t.fail("heal "+what, err)
		}
	}
}

// lossyOnce puts a shop drawn on a lossy link for up to LinkFor, both its
// ends (its namespace's eth0, what it sends; its veth on the bridge, what
// it is sent), and records it in t. The shop is reserved (pick), as for a
// kill, and deaf meanwhile: a client's request lost on the link, which
// timed out, may never have reached it.
func (cl *cluster) lossyOnce(ctx context.Context, pick func() int, release func(int), rng *lockedRand, t *tally, logf func(string, ...any)) {
	i := pick()
	if i < 0 {
		return
	}
	defer release(i)
	s, p := cl.spaces[i], cl.shops[i]
	hold := rng.between(cl.cfg.LinkFor/2, cl.cfg.LinkFor)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cl.cfg.Link
	how := "netem"
	apply := func(build func(ns, dev string) [][]string) error {
		for _, end := range [][2]string{{s.name, "eth0"}, {"", s.hostVeth}} {
			for _, cmd := range build(end[0], end[1]) {
				if err := cl.net.run(cmd...); err != nil {
					return err
				}
			}
		}
		return nil
	}
	clear := func() {
		cl.net.run(linkClear(s.name, "eth0")...) //nolint:errcheck // not made, nothing to clear
		cl.net.run(linkClear("", s.hostVeth)...) //nolint:errcheck // idem
	}
	if err := apply(k.netemCommands); err != nil {
		clear()
		how = "HTB lanes (no netem in this kernel)"
		if err := apply(k.laneCommands); err != nil {
			clear()
			t.fail("lossy link "+p.name, err)
			return
		}
	}
	p.goDeaf()
	logf("lossy link on %s for %s (%s: delay %s ± %s, loss %s, reorder %s)", p.name, hold.Round(time.Millisecond), how,
		ms(k.Delay), ms(k.Jitter), pct(k.Loss), pct(k.Reorder))
	began := time.Now()
	t.count(func(d *Disruptions) { d.LossyLinks++; d.LinkMethod = how })
	time.Sleep(hold)
	clear()
	p.hearing()
	logf("lossy link on %s healed", p.name)
	t.span(windowLossyLink, began)
}

// healNet clears every cut and lossy link, in case one was left.
func (cl *cluster) healNet() {
	if cl.net == nil {
		return
	}
	for _, s := range append(cl.spaces, cl.providerSpace) {
		s.mu.Lock()
		for _, pref := range []int{prefFrom, prefTo} {
			// A rule per preference at most (one cut at a time); a second
			// delete finds none.
			for range 2 {
				if cl.net.run("ip", "-n", s.name, "rule", "del", "pref", strconv.Itoa(pref)) != nil {
					break
				}
			}
		}
		cl.net.run(linkClear(s.name, "eth0")...) //nolint:errcheck // nothing to clear
		if s != cl.providerSpace {
			cl.net.run(linkClear("", s.hostVeth)...) //nolint:errcheck // nothing to clear
		}
		s.mu.Unlock()
	}
}
