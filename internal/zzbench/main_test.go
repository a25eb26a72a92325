package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"exactlyonce/internal/database"
	"exactlyonce/internal/localpg"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestBench(t *testing.T) {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("/tmp", "bench-")
	t0 := time.Now()
	s, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Throwaway: true})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("start", time.Since(t0))
	defer s.Stop(ctx)
	c, _ := pgx.Connect(ctx, s.URL("postgres"))
	c.Exec(ctx, "CREATE DATABASE tpl")
	t0 = time.Now()
	p, _ := pgxpool.New(ctx, s.URL("tpl"))
	if err := database.Migrate(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Close()
	fmt.Println("migrate", time.Since(t0))
	tot := map[string]time.Duration{}
	for i := 0; i < 10; i++ {
		for _, strat := range []string{"WAL_LOG", "FILE_COPY"} {
			t0 = time.Now()
			if _, err := c.Exec(ctx, fmt.Sprintf("CREATE DATABASE d%d TEMPLATE tpl STRATEGY %s", i, strat)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, fmt.Sprintf("DROP DATABASE d%d WITH (FORCE)", i)); err != nil {
				t.Fatal(err)
			}
			tot[strat] += time.Since(t0)
		}
	}
	fmt.Println(tot["WAL_LOG"]/10, tot["FILE_COPY"]/10)
	t0 = time.Now()
	s.Stop(ctx)
	fmt.Println("stop", time.Since(t0))
}
