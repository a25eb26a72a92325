package fakestripe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"exactlyonce/fakestripe"
)

// BenchmarkCreateConfirm is one order's work at the fake: a create and a
// confirm of a PaymentIntent, each with its idempotency key, over HTTP, one
// after the other, with each store. Besides the time it reports the CPU
// per create+confirm of this process (the fake and its client, both
// here) and, with the postgres store, of the PostgreSQL server
// (TEST_DATABASE_URL, as bin/testpg sets it; the store is skipped
// without it): what the memory store saves the machine the load test
// runs on (issue 37).
func BenchmarkCreateConfirm(b *testing.B) {
	for _, store := range []string{"memory", "postgres"} {
		b.Run(store, func(b *testing.B) {
			var p *fakestripe.Provider
			var pgPID int
			if store == "memory" {
				p = fakestripe.NewInMemory("sk_bench")
			} else {
				dsn := os.Getenv("TEST_DATABASE_URL")
				if dsn == "" {
					b.Skip("TEST_DATABASE_URL is not set (run under bin/testpg)")
				}
				pool, err := pgxpool.New(context.Background(), dsn)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(pool.Close)
				if err := fakestripe.Migrate(context.Background(), pool); err != nil {
					b.Fatal(err)
				}
				// The server's main process: the parent of a backend.
				var backend int
				if err := pool.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
					b.Fatal(err)
				}
				pgPID = parentOf(b, backend)
				p = fakestripe.New(pool, "sk_bench")
			}
			b.Cleanup(p.Close)
			e := echo.New()
			p.Mount(e)
			srv := httptest.NewServer(e)
			b.Cleanup(srv.Close)
			run := strconv.FormatInt(time.Now().UnixNano(), 36)

			cpu0, pg0 := selfCPU(b), treeCPU(b, pgPID)
			b.ResetTimer()
			for i := range b.N {
				key := fmt.Sprintf("bench-%s-%d", run, i)
				id := post(b, srv.URL+"/v1/payment_intents", key, url.Values{
					"amount": {"1200"}, "currency": {"eur"}, "metadata[order]": {key}, "payment_method_types[]": {"card"},
				})
				post(b, srv.URL+"/v1/payment_intents/"+id+"/confirm", key+"/confirm", url.Values{"payment_method": {"pm_card_visa"}})
			}
			b.StopTimer()
			perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
			b.ReportMetric(perOp(selfCPU(b)-cpu0), "cpu-µs/op")
			if pgPID != 0 {
				b.ReportMetric(perOp(treeCPU(b, pgPID)-pg0), "pg-cpu-µs/op")
			}
		})
	}
}

// post sends form with the key and returns the id of the 200's object.
func post(b *testing.B, u, key string, form url.Values) string {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk_bench")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("POST %s: got %d, %v", u, resp.StatusCode, err)
	}
	return got.ID
}

// selfCPU is this process's CPU time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procStat is the fields of /proc/<pid>/stat after the command's name.
func procStat(pid int) ([]string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(raw)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:]), nil
}

// parentOf is the parent of the process pid.
func parentOf(b *testing.B, pid int) int {
	f, err := procStat(pid)
	if err != nil {
		b.Fatal(err)
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// treeCPU is the CPU time of the process pid, its children reaped and
// those alive (zero for pid 0): a PostgreSQL server's, all its backends'.
func treeCPU(b *testing.B, pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	ticks := func(f []string, from, to int) (n int64) {
		for _, v := range f[from:to] {
			t, _ := strconv.ParseInt(v, 10, 64)
			n += t
		}
		return n
	}
	// After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
	own, err := procStat(pid)
	if err != nil {
		b.Fatal(err)
	}
	total := ticks(own, 11, 15)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := procStat(child)
		if err != nil || f[1] != strconv.Itoa(pid) {
			continue
		}
		total += ticks(f, 11, 13)
	}
	return time.Duration(total) * clockTick
}
