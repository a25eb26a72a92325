package client_test

import (
	"os"
	"path/filepath"
	"testing"

	"exactlyonce/client"
)

func TestFileStoreKeepsKeysAcrossInstances(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	first, err := client.NewFileStore(path).Key("cart-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.NewFileStore(path).Key("cart-1")
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Errorf("got %+v from a new instance, want %+v", again, first)
	}
	other, err := client.NewFileStore(path).Key("cart-2")
	if err != nil {
		t.Fatal(err)
	}
	if other.Key == first.Key {
		t.Errorf("got the same key %q for two operations, want two", other.Key)
	}
	s := client.NewFileStore(path)
	if err := s.Forget("cart-1"); err != nil {
		t.Fatal(err)
	}
	fresh, err := s.Key("cart-1")
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Key == first.Key {
		t.Errorf("got key %q after Forget, want a new one", fresh.Key)
	}
	files, _ := os.ReadDir(filepath.Dir(path))
	if len(files) != 1 {
		t.Errorf("got %d files in the store's directory, want 1 (no temp files left)", len(files))
	}
}

func TestNewKeyIsAUUIDv4(t *testing.T) {
	k := client.NewKey()
	if len(k) != 36 || k[14] != '4' {
		t.Errorf("got key %q, want a version 4 UUID", k)
	}
	if client.NewKey() == k {
		t.Error("got the same key twice, want random keys")
	}
}
