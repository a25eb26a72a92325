// Package static holds the shop's stylesheet, script and icon, embedded in the
// binary so that a deployment serves exactly the assets its templates were
// written against. Pages link them through URL, which adds a content hash:
// a changed file gets a new URL, so browsers may cache each URL for good.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sync"
)

// FS holds the assets, served under /static/.
//
//go:embed *.css *.js *.svg
var FS embed.FS

// Version returns a short hash of the named file's contents, or "" when
// there is no such file.
func Version(name string) string {
	return versions()[name]
}

// URL is the path pages link the named asset by: /static/name?v=hash.
func URL(name string) string {
	return "/static/" + name + "?v=" + Version(name)
}

// versions hashes every file once, on first use; the files never change
// while the process runs.
var versions = sync.OnceValue(func() map[string]string {
	v := map[string]string{}
	entries, _ := fs.ReadDir(FS, ".") // an embedded directory always reads
	for _, e := range entries {
		b, err := FS.ReadFile(e.Name())
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		v[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return v
})
