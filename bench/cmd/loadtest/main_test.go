package main

import (
	"slices"
	"testing"
)

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("10k, 1m,500")
	if err != nil || !slices.Equal(got, []int{10000, 1000000, 500}) {
		t.Errorf("parseSizes: got %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "-5", "21m", "ten"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q) accepted", bad)
		}
	}
	if human(10000) != "10k" || human(2000000) != "2M" || human(1500) != "1500" {
		t.Errorf("human: %s %s %s", human(10000), human(2000000), human(1500))
	}
}

func TestLibpqEnv(t *testing.T) {
	env, err := libpqEnv("postgres://postgres@/postgres?host=%2Ftmp%2Fx.sock&port=5432&sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PGHOST=/tmp/x.sock", "PGPORT=5432", "PGUSER=postgres", "PGDATABASE=postgres"}
	if !slices.Equal(env, want) {
		t.Errorf("got %v, want %v", env, want)
	}
}
