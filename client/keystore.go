package client

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Entry is the key of one logical operation and when it was made. Created
// is what the retry deadline is measured from: the server's retention
// window starts at the key's first use, which is just after.
type Entry struct {
	Key     string    `json:"key"`
	Created time.Time `json:"created"`
}

// KeyStore keeps one key per logical operation. Implementations must have
// saved a new entry durably before Key returns it: the point of the store
// is that a key is never sent before it can survive a crash.
type KeyStore interface {
	// Key returns op's entry, creating and saving a new one if op has none.
	Key(op string) (Entry, error)
	// Put replaces op's entry; tests and migrations use it.
	Put(op string, e Entry) error
	// Forget drops op's entry, once the caller is done with the operation.
	Forget(op string) error
}

// NewKey returns a random version 4 UUID, the key format the IETF draft and
// Stripe recommend.
func NewKey() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// FileStore is a KeyStore in one JSON file. Every change writes a new file
// beside it, syncs it and renames it over the old one, so a crash leaves
// either the old or the new content, never half of one. It is safe for
// concurrent use within one process; two processes must not share a file.
type FileStore struct {
	path string
	mu   sync.Mutex
}

// NewFileStore returns a store kept at path, which need not exist yet.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

func (s *FileStore) load() (map[string]Entry, error) {
	entries := map[string]Entry{}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return entries, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("key store %s: %w", s.path, err)
	}
	return entries, nil
}

// save writes entries atomically: temp file, fsync, rename, fsync the
// directory so the rename itself is durable.
func (s *FileStore) save(entries map[string]Entry) error {
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, filepath.Base(s.path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Key implements KeyStore.
func (s *FileStore) Key(op string) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := s.load()
	if err != nil {
		return Entry{}, err
	}
	if e, ok := entries[op]; ok {
		return e, nil
	}
	e := Entry{Key: NewKey(), Created: time.Now().UTC()}
	entries[op] = e
	if err := s.save(entries); err != nil {
		return Entry{}, fmt.Errorf("save key of %q: %w", op, err)
	}
	return e, nil
}

// Put implements KeyStore.
func (s *FileStore) Put(op string, e Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := s.load()
	if err != nil {
		return err
	}
	entries[op] = e
	return s.save(entries)
}

// Forget implements KeyStore.
func (s *FileStore) Forget(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := s.load()
	if err != nil {
		return err
	}
	if _, ok := entries[op]; !ok {
		return nil
	}
	delete(entries, op)
	return s.save(entries)
}
