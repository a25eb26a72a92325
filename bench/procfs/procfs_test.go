package procfs

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Stat
	}{
		{"4242 (postgres) S 4200 4242 4242 0 -1", Stat{Comm: "postgres", State: 'S', PPID: 4200}},
		// A command name may hold spaces and parentheses.
		{"7 (a) b (c)) T 1 7 7", Stat{Comm: "a) b (c)", State: 'T', PPID: 1}},
	} {
		got, err := ParseStat([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("ParseStat(%q): got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "1 postgres S 1", "1 (x)", "1 (x) S y"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q): no error", bad)
		}
	}
}

// TestReadStat reads the test binary's own stat: its parent's child.
func TestReadStat(t *testing.T) {
	t.Parallel()
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getppid() || st.Comm == "" {
		t.Errorf("got %+v, want a named process whose parent is %d", st, os.Getppid())
	}
}
