package chaos

import (
	"strings"
	"testing"
)

// TestLoggedFailuresCountRequestLines: only the request logger's lines
// count, by status, 5xx only; each 500 is kept with what names it and the
// error logged for its request; lines that are not JSON are skipped.
func TestLoggedFailuresCountRequestLines(t *testing.T) {
	t.Parallel()
	log := strings.Join([]string{
		`{"time":"t1","level":"ERROR","msg":"request failed","request_id":"r1","status":500,"err":"claim key: context canceled"}`,
		`{"time":"t1","level":"ERROR","msg":"request","request_id":"r1","method":"POST","path":"/api/orders","status":500}`,
		`{"time":"t2","level":"ERROR","msg":"request","method":"POST","path":"/api/orders","status":503}`,
		`{"time":"t3","level":"ERROR","msg":"request","method":"POST","path":"/api/orders","status":503}`,
		`{"time":"t4","level":"WARN","msg":"request refused","status":409}`,
		`{"time":"t5","level":"INFO","msg":"request","status":201}`,
		`goroutine 1 [running]:`,
		``,
	}, "\n")
	lf := loggedFailures{statuses: map[string]int{}}
	if err := lf.read(strings.NewReader(log), "web-0"); err != nil {
		t.Fatal(err)
	}
	if len(lf.statuses) != 2 || lf.statuses["500"] != 1 || lf.statuses["503"] != 2 {
		t.Errorf("got statuses %v, want one 500 and two 503s", lf.statuses)
	}
	if len(lf.errors500) != 1 || lf.errors500[0] != "web-0 at t1: POST /api/orders (request r1): claim key: context canceled" {
		t.Errorf("got 500s %q", lf.errors500)
	}
}
