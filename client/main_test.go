package client_test

import (
	"testing"

	"exactlyonce/internal/pgtest"
)

// The tests run the client against the real shop (internal/apptest) on a
// real PostgreSQL. Only the tests import this module's internal packages;
// the client itself uses the standard library alone.
func TestMain(m *testing.M) { pgtest.Main(m) }
