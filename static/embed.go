// Package static holds the shop's stylesheet, script and icon, embedded in the
// binary so that a deployment serves exactly the assets its templates were
// written against. Pages link them through URL, which adds a content hash:
// a changed file gets a new URL, so browsers may cache each URL for good.
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"sync"
	"time"

	"exactlyonce/idem/idemjs"
)

// FS holds the shop's assets, served under /static/.
//
//go:embed *.css *.js *.svg
var FS embed.FS

// Shop is the shop's assets, as its pages link them and its listeners
// serve them.
var Shop = NewSet(FS, "/static/")

// Kit is the idempotency kit's browser module (idem/idemjs), which sends
// the pay and pickup forms: served under /static/idem/, and linked by the
// hash of its content as the shop's own assets are.
var Kit = NewSet(idemjs.FS, "/static/idem/")

// URL is the path pages link the named asset of the shop by:
// /static/name?v=hash.
func URL(name string) string { return Shop.URL(name) }

// Set is a folder of assets served under one path, each linked with the
// hash of its content. The demo serves its own through one (the product's
// binary embeds none of the demo's).
type Set struct {
	fsys   fs.FS
	prefix string
	// versions hashes every file once, on first use; the files never
	// change while the process runs.
	versions func() map[string]string
}

// NewSet serves fsys's files (its top folder) under prefix, such as
// "/static/".
func NewSet(fsys fs.FS, prefix string) *Set {
	return &Set{fsys: fsys, prefix: prefix, versions: sync.OnceValue(func() map[string]string {
		v := map[string]string{}
		entries, _ := fs.ReadDir(fsys, ".") // an embedded directory always reads
		for _, e := range entries {
			b, err := fs.ReadFile(fsys, e.Name())
			if err != nil {
				continue
			}
			sum := sha256.Sum256(b)
			v[e.Name()] = hex.EncodeToString(sum[:6])
		}
		return v
	})}
}

// Version returns a short hash of the named file's contents, or "" when
// there is no such file.
func (s *Set) Version(name string) string { return s.versions()[name] }

// URL is the path pages link the named asset by: prefix + name?v=hash.
func (s *Set) URL(name string) string { return s.prefix + name + "?v=" + s.Version(name) }

// ServeHTTP serves the file the request's last path element names. A
// request naming the current hash in ?v= may be cached for good; any other
// is revalidated against the ETag.
func (s *Set) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Path)
	b, err := fs.ReadFile(s.fsys, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	v := s.Version(name)
	if r.URL.Query().Get("v") == v {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("ETag", `"`+v+`"`)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}
