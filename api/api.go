// Package api holds the OpenAPI 3.1 description of the JSON API. It lives in
// the repository beside the code, is served at GET /api/openapi.json, and
// the handler tests validate real responses of every route against it, so
// it cannot drift from what the server does.
package api

import _ "embed"

// OpenAPI is the description, as served.
//
//go:embed openapi.json
var OpenAPI []byte
