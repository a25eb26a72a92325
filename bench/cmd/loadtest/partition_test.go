package main

import (
	"slices"
	"testing"
	"time"
)

func TestDayPartitions(t *testing.T) {
	now := time.Date(2026, 11, 30, 2, 30, 0, 0, time.FixedZone("CET", 3600))
	parts := dayPartitions(now, 2, 1)
	var names []string
	for _, p := range parts {
		names = append(names, p.Suffix)
		if p.To.Sub(p.From) != 24*time.Hour || p.From.Location() != time.UTC {
			t.Errorf("%s: %s to %s, want one UTC day", p.Suffix, p.From, p.To)
		}
	}
	// 02:30 CET is 01:30 UTC on the 30th: the UTC day decides. Two days
	// back, today, tomorrow.
	if want := []string{"p20261128", "p20261129", "p20261130", "p20261201"}; !slices.Equal(names, want) {
		t.Fatalf("got %v, want %v", names, want)
	}
	for _, c := range []struct {
		now  time.Time
		want []string
	}{
		// At 01:30 UTC on the 30th a key of the 29th at 00:00 is 25.5 h
		// old, but one at 23:59 is not a day old: only the 28th is
		// entirely past 24 h.
		{now, []string{"p20261128"}},
		// At midnight on the 30th the 28th has just become droppable.
		{time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), []string{"p20261128"}},
		{time.Date(2026, 11, 29, 23, 59, 59, 0, time.UTC), nil},
		{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), []string{"p20261128", "p20261129"}},
	} {
		var got []string
		for _, p := range expiredPartitions(parts, c.now, 24*time.Hour) {
			got = append(got, p.Suffix)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("expired at %s: got %v, want %v", c.now, got, c.want)
		}
	}
}

func TestParseSweepBy(t *testing.T) {
	got, err := parseSweepBy("delete, partition,partition-plain")
	if err != nil || !slices.Equal(got, []string{"delete", "partition", "partition-plain"}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "drop", "delete,delete", "partition,"} {
		if _, err := parseSweepBy(bad); err == nil {
			t.Errorf("parseSweepBy(%q) accepted", bad)
		}
	}
}

// TestPartitionRetention builds the stand-ins as partitionLoad does, seeds
// a day, and drops it both ways: the other days' keys stay. It also pins
// down what partitioning costs in correctness: the primary key includes
// created_at, so the same (scope, key) created on two days is two rows.
func TestPartitionRetention(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn := customersDB(t)
	now := time.Now()
	parts := dayPartitions(now, 2, 1)
	if err := createPartitioned(ctx, conn, parts); err != nil {
		t.Fatal(err)
	}
	for i, p := range parts[:3] {
		if err := seedPartition(ctx, conn, "expired-", p, 100*(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	inDay := func(p dayPartition) int {
		return count("SELECT count(*) FROM idem_keys_part_" + p.Suffix)
	}
	if inDay(parts[0]) != 100 || inDay(parts[1]) != 200 || inDay(parts[2]) != 300 || inDay(parts[3]) != 0 {
		t.Fatalf("seeded %d, %d, %d, %d; want 100, 200, 300, 0", inDay(parts[0]), inDay(parts[1]), inDay(parts[2]), inDay(parts[3]))
	}
	if n := count("SELECT count(*) FROM order_keys_part"); n != 600 {
		t.Fatalf("%d order_keys_part rows, want 600", n)
	}
	// seedPartition names keys expired-1… in every day: the same
	// (scope, key) lives in three partitions, and nothing objects.
	if n := count("SELECT count(*) FROM (SELECT scope, key FROM idem_keys_part GROUP BY 1, 2 HAVING count(*) > 1) d"); n != 200 {
		t.Errorf("%d (scope, key) in more than one day, want 200", n)
	}
	// The partitioned claim stays exactly-once across days: a key of an
	// earlier day is found, a new one is inserted once.
	claim := func(key string) bool {
		t.Helper()
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT idem_claim_part('00000000-0000-4000-8000-000000000002', $1, '\x01', '30 seconds',
			'{}', gen_random_uuid(), gen_random_uuid(), 'order')`, key).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if claim("expired-1") {
		t.Error("idem_claim_part claimed a key of an earlier day again")
	}
	if !claim("fresh") || claim("fresh") {
		t.Error("idem_claim_part: want a new key claimed once")
	}
	if err := dropPartition(ctx, conn, parts[0], true, func(string, time.Duration) {}); err != nil {
		t.Fatal(err)
	}
	if err := dropPartition(ctx, conn, parts[1], false, func(string, time.Duration) {}); err != nil {
		t.Fatal(err)
	}
	if k, o := count("SELECT count(*) FROM idem_keys_part"), count("SELECT count(*) FROM order_keys_part"); k != 301 || o != 300 {
		t.Errorf("after dropping two days: %d keys, %d order_keys_part rows; want 301 and 300", k, o)
	}
	if n := count(`SELECT count(*) FROM pg_class WHERE relname LIKE '%_part_` + parts[0].Suffix + `' OR relname LIKE '%_part_` + parts[1].Suffix + `'`); n != 0 {
		t.Errorf("%d tables of the dropped days left", n)
	}
}
