// Package migrations holds the database schema as goose migrations, embedded
// in the binary so that a deployment cannot run code against a schema it did
// not bring along.
package migrations

import "embed"

// FS holds the numbered SQL migrations, applied in lexical order.
//
//go:embed *.sql
var FS embed.FS
