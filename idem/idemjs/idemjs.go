// Package idemjs serves idem.js, the kit's ES module for forms sent with
// fetch (idempotency keys minted in the browser, kept per form and content
// version, retried safely), with its type declarations idem.d.ts. The files
// sit in this package's folder, which is also the module's npm package
// (package.json); Go's embed cannot reach a file outside the embedding
// package's folder, so the package that embeds them is here, and an app
// mounts Handler, or serves FS with a file server of its own:
//
//	mux.Handle("GET /idem/", http.StripPrefix("/idem/", idemjs.Handler()))
//
// A page then imports it with no build step:
//
//	import { enhance } from "/idem/idem.js";
package idemjs

import (
	"embed"
	"net/http"
)

// FS holds idem.js and idem.d.ts at its top.
//
//go:embed idem.js idem.d.ts
var FS embed.FS

// Handler serves FS: idem.js as text/javascript, idem.d.ts, and nothing
// else. Mount it under a prefix with http.StripPrefix. Its answers carry
// no Cache-Control, so a browser revalidates them (Last-Modified is not
// known for embedded files; an app that links the file by a content hash,
// as the shop does, may cache it for good).
func Handler() http.Handler {
	return http.FileServerFS(FS)
}
