package hapg

import (
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestURLReachesEitherNode checks that pgx reads the multi-host URL as two
// hosts to try in turn, keeping only a connection that takes writes.
func TestURLReachesEitherNode(t *testing.T) {
	f := &Formation{}
	f.nodes = []*Node{newNode(f, "node1", 20001), newNode(f, "node2", 20002)}
	cfg, err := pgx.ParseConfig(f.URL("shop"))
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{cfg.Host + ":" + strconv.Itoa(int(cfg.Port))}
	for _, fb := range cfg.Fallbacks {
		hosts = append(hosts, fb.Host+":"+strconv.Itoa(int(fb.Port)))
	}
	if got, want := len(hosts), 2; got != want || hosts[0] != "127.0.0.1:20001" || hosts[1] != "127.0.0.1:20002" {
		t.Errorf("got hosts %v, want 127.0.0.1:20001 and 127.0.0.1:20002", hosts)
	}
	if cfg.Database != "shop" || cfg.User != "postgres" {
		t.Errorf("got database %q user %q, want shop, postgres", cfg.Database, cfg.User)
	}
	if cfg.ValidateConnect == nil {
		t.Error("got no ValidateConnect, want target_session_attrs=read-write's check")
	}
}
