package localpg

import (
	"os"
	"os/user"
	"strings"
	"testing"
)

// TestServerCommandRunsAsTheServersUser runs id through ServerCommand: as
// root it must run as postgres, from /, otherwise as ourselves.
func TestServerCommandRunsAsTheServersUser(t *testing.T) {
	want := "postgres"
	if os.Geteuid() != 0 {
		me, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		want = me.Username
	}
	cmd, err := ServerCommand(t.Context(), "sh", "-c", "id -un; pwd")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); len(got) != 2 || got[0] != want || got[1] != "/" {
		t.Errorf("got %q, want %s and /", out, want)
	}

	initdb, err := ServerCommand(t.Context(), "initdb")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	if initdb.Path != bin+"/initdb" {
		t.Errorf("initdb: got %s, want it from BinDir %s", initdb.Path, bin)
	}
}
