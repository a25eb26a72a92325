package database

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestPoolOptions(t *testing.T) {
	t.Parallel()
	parse := func() *pgxpool.Config {
		cfg, err := pgxpool.ParseConfig("postgres://u@127.0.0.1:5432/db")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := parse()
	defaults := cfg.MaxConns
	if err := (PoolOptions{}).apply(cfg); err != nil || cfg.MaxConns != defaults ||
		cfg.ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement {
		t.Errorf("zero options changed the pool: max %d, mode %v, err %v", cfg.MaxConns, cfg.ConnConfig.DefaultQueryExecMode, err)
	}
	for name, want := range QueryModes {
		cfg := parse()
		if err := (PoolOptions{MaxConns: 12, QueryMode: name}).apply(cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.MaxConns != 12 || cfg.ConnConfig.DefaultQueryExecMode != want {
			t.Errorf("%s: got max %d, mode %v", name, cfg.MaxConns, cfg.ConnConfig.DefaultQueryExecMode)
		}
	}
	if err := (PoolOptions{QueryMode: "prepared"}).apply(parse()); err == nil {
		t.Error("an unknown query mode was accepted")
	}
	if err := (PoolOptions{MaxConns: -1}).apply(parse()); err == nil {
		t.Error("a negative pool size was accepted")
	}
}
