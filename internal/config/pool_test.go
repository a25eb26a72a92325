package config

import "testing"

func TestPoolSettings(t *testing.T) {
	validEnv(t)
	t.Setenv("DB_MAX_CONNS", "24")
	t.Setenv("DB_QUERY_MODE", "cache_describe")
	t.Setenv("MIGRATE_DATABASE_URL", "postgres://localhost:5432/x")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.DBMaxConns != 24 || c.DBQueryMode != "cache_describe" || c.MigrateDatabaseURL != "postgres://localhost:5432/x" {
		t.Errorf("got DBMaxConns %d, DBQueryMode %q, MigrateDatabaseURL %q", c.DBMaxConns, c.DBQueryMode, c.MigrateDatabaseURL)
	}
	for _, bad := range [][2]string{{"DB_MAX_CONNS", "0"}, {"DB_MAX_CONNS", "2.5"}, {"DB_MAX_CONNS", "many"}, {"DB_QUERY_MODE", "prepared"}} {
		t.Run(bad[0]+"="+bad[1], func(t *testing.T) {
			t.Setenv(bad[0], bad[1])
			if _, err := Load(); err == nil {
				t.Errorf("%s=%s was accepted", bad[0], bad[1])
			}
		})
	}
}
