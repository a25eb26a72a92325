package chaos

import (
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSweepCommandsDeleteOnlyDeadRuns: the sweep deletes the namespaces
// and links of runs whose process is gone, and nothing of a run still
// going nor anything the harness did not name.
func TestSweepCommandsDeleteOnlyDeadRuns(t *testing.T) {
	t.Parallel()
	alive := func(pid int) bool { return pid == 200 }
	namespaces := []string{"cx100-s0", "cx100-p", "cx200-s0", "cxfoo-s0", "other", "cx100"}
	links := []string{"lo", "eth0", "cx100br", "cx100s0h", "cx100ph", "cx200br", "cx200s1h", "cx100s0n", "cxbr", "docker0"}
	got := sweepCommands(namespaces, links, alive)
	want := [][]string{
		{"ip", "netns", "del", "cx100-s0"},
		{"ip", "netns", "del", "cx100-p"},
		{"ip", "link", "del", "cx100br"},
		{"ip", "link", "del", "cx100s0h"},
		{"ip", "link", "del", "cx100ph"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("sweep:\n got %q\nwant %q", got, want)
	}
}

// TestPartitionCuts: each kind cuts what it says in the namespace it
// says, with rules that name the peer's address (and the front's port
// for the webhooks), in the direction it says.
func TestPartitionCuts(t *testing.T) {
	t.Parallel()
	shop, provider := &netSpace{name: "cx1-s0"}, &netSpace{name: "cx1-p"}
	const db, prov, front = "10.200.1.3", "10.200.1.2", "10.200.1.10:8080"
	in := func(ip string) string { return "ip -n cx1-s0 rule add pref 100 from " + ip + " iif eth0 blackhole" }
	out := func(ip string) string { return "ip -n cx1-s0 rule add pref 101 to " + ip + " blackhole" }
	cases := map[string][]string{
		windowPartitionDB:       {in(db), out(db)},
		windowPartitionDBOut:    {out(db)},
		windowPartitionDBIn:     {in(db)},
		windowPartitionProvider: {in(prov), out(prov)},
		windowPartitionProvIn:   {in(prov)},
		windowPartitionWebhooks: {"ip -n cx1-p rule add pref 101 to 10.200.1.10 ipproto tcp dport 8080 blackhole"},
	}
	if len(cases) != len(partitionKinds) {
		t.Fatalf("%d kinds tested, %d drawn", len(cases), len(partitionKinds))
	}
	for _, kind := range partitionKinds {
		var got []string
		for _, c := range partitionCut(kind, shop, provider, db, prov, front).commands("add") {
			got = append(got, strings.Join(c, " "))
		}
		if !slices.Equal(got, cases[kind]) {
			t.Errorf("%s:\n got %q\nwant %q", kind, got, cases[kind])
		}
	}
}

// TestDBURLThroughForwarders: localpg's socket URL and a formation's
// multi-host URL name the servers the forwarders relay to, and the URL the
// shops get names the forwarders instead, the rest kept.
func TestDBURLThroughForwarders(t *testing.T) {
	t.Parallel()
	sock := "postgres://postgres@/postgres?host=%2Ftmp%2Fpg+x&port=5433&sslmode=disable"
	ts, err := dbTargets(sock)
	if err != nil || len(ts) != 1 || ts[0] != (dbTarget{"unix", "/tmp/pg x/.s.PGSQL.5433"}) {
		t.Fatalf("socket targets %v, %v", ts, err)
	}
	got, err := netDBURL(sock, []string{"10.200.1.3:4000"})
	if want := "postgres://postgres@10.200.1.3:4000/postgres?sslmode=disable"; err != nil || got != want {
		t.Fatalf("socket URL %q, %v; want %q", got, err, want)
	}
	ha := "postgres://postgres@127.0.0.1:6001,127.0.0.1:6002/postgres?connect_timeout=5&sslmode=disable&target_session_attrs=read-write"
	ts, err = dbTargets(ha)
	if err != nil || !slices.Equal(ts, []dbTarget{{"tcp", "127.0.0.1:6001"}, {"tcp", "127.0.0.1:6002"}}) {
		t.Fatalf("formation targets %v, %v", ts, err)
	}
	got, err = netDBURL(ha, []string{"10.200.1.3:4001", "10.200.1.3:4002"})
	if want := "postgres://postgres@10.200.1.3:4001,10.200.1.3:4002/postgres?connect_timeout=5&sslmode=disable&target_session_attrs=read-write"; err != nil || got != want {
		t.Fatalf("formation URL %q, %v; want %q", got, err, want)
	}
}

// TestLaneClassifier runs the lanes' classic-BPF program (ld rand, two
// jge, three ret) on random numbers across the range: the shares of the
// drop class and the fast lane are Loss and (1-Loss)·Reorder, the rest
// goes to the slow lane, and the slow lane's rate sends a full-sized
// packet in Delay.
func TestLaneClassifier(t *testing.T) {
	t.Parallel()
	k := Link{Delay: 100 * time.Millisecond, Loss: 0.05, Reorder: 0.25}
	cs := k.laneCommands("ns", "eth0")
	var prog, rate string
	for _, c := range cs {
		if i := slices.Index(c, "bytecode"); i >= 0 {
			prog = c[i+1]
		}
		if slices.Contains(c, "1:20") {
			rate = c[slices.Index(c, "rate")+1]
		}
	}
	if rate != "120000bit" {
		t.Errorf("slow lane rate %s, want 120000bit (1500 bytes in 100 ms)", rate)
	}
	var ins [][4]uint64
	for _, s := range strings.Split(strings.TrimSuffix(prog, ","), ",")[1:] {
		var in [4]uint64
		for j, f := range strings.Fields(s) {
			in[j], _ = strconv.ParseUint(f, 10, 64)
		}
		ins = append(ins, in)
	}
	run := func(a uint64) uint64 {
		for pc := 0; pc < len(ins); {
			in := ins[pc]
			switch in[0] {
			case 0x20: // ld rand
				if in[3] != 4294963256 {
					t.Fatalf("load of %d, not SKF_AD_RANDOM", in[3])
				}
				pc++
			case 0x35: // jge k
				if a >= in[3] {
					pc += 1 + int(in[1])
				} else {
					pc += 1 + int(in[2])
				}
			case 0x06:
				return in[3]
			default:
				t.Fatalf("opcode %#x", in[0])
			}
		}
		t.Fatal("ran off the end")
		return 0
	}
	count := map[uint64]int{}
	const n = 100000
	for i := range uint64(n) {
		count[run(i*(1<<32)/n)]++
	}
	share := func(class uint64) float64 { return float64(count[class]) / n }
	if d, f, s := share(0x10030), share(0x10010), share(0x10020); !near(d, 0.05) || !near(f, 0.95*0.25) || !near(s, 0.95*0.75) {
		t.Errorf("drop %.4f, fast %.4f, slow %.4f; want 0.05, %.4f, %.4f", d, f, s, 0.95*0.25, 0.95*0.75)
	}
}

func near(a, b float64) bool { return a-b < 0.001 && b-a < 0.001 }

// TestNetLab makes a run's network for real (root and iproute2; skipped
// otherwise): a shop's namespace reaches a server on the database's
// address; each cut stops it in the direction it names and healing lets
// it through again; the lossy link is applied and cleared; and close
// leaves nothing of the run behind, as the sweep leaves nothing of a run
// whose process is gone.
func TestNetLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2")
	}
	l, err := startNetLab()
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	shop, err := l.space("s0", l.shopIP(0))
	if err != nil {
		t.Fatal(err)
	}
	provider, err := l.space("p", l.providerIP())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(l.dbIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hi\n")) //nolint:errcheck // a client that got nothing fails reaches()
			c.Close()
		}
	}()
	// bash's /dev/tcp inside the namespace: connects and reads the line.
	reaches := func() bool {
		cmd := exec.Command("ip", "netns", "exec", shop.name, "timeout", "2", "bash", "-c", "exec 3<>/dev/tcp/"+strings.Replace(ln.Addr().String(), ":", "/", 1)+" && head -1 <&3")
		out, err := cmd.Output()
		return err == nil && strings.TrimSpace(string(out)) == "hi"
	}
	if !reaches() {
		t.Fatal("the shop's namespace does not reach the database's address")
	}
	for _, kind := range []string{windowPartitionDB, windowPartitionDBOut, windowPartitionDBIn} {
		c := partitionCut(kind, shop, provider, l.dbIP(), l.providerIP(), "")
		for _, cmd := range c.commands("add") {
			if err := l.run(cmd...); err != nil {
				t.Fatal(err)
			}
		}
		if reaches() {
			t.Errorf("%s: the shop still reaches the database", kind)
		}
		for _, cmd := range c.commands("del") {
			if err := l.run(cmd...); err != nil {
				t.Fatal(err)
			}
		}
		if !reaches() {
			t.Errorf("%s healed: the shop does not reach the database", kind)
		}
	}
	k := Link{Delay: 50 * time.Millisecond, Loss: 0.05, Reorder: 0.25}
	build := k.netemCommands
	if l.run(build(shop.name, "eth0")[0]...) != nil {
		build = k.laneCommands
	} else {
		if err := l.run(linkClear(shop.name, "eth0")...); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range build(shop.name, "eth0") {
		if err := l.run(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.run(linkClear(shop.name, "eth0")...); err != nil {
		t.Fatal(err)
	}
	l.close()
	nsOut, _ := exec.Command("ip", "netns", "list").Output()
	linkOut, _ := exec.Command("ip", "-o", "link", "show").Output()
	if strings.Contains(string(nsOut), l.prefix+"-") || strings.Contains(string(linkOut), " "+l.prefix) {
		t.Errorf("left behind:\n%s\n%s", nsOut, linkOut)
	}
}
