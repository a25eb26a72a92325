package idem_test

import (
	"testing"

	"exactlyonce/internal/pgtest"
)

// The kit's tests borrow the application's throwaway PostgreSQL (pgtest),
// which applies the kit's migrations with the application's. A team that
// copies the kit points them at its own test database.
func TestMain(m *testing.M) { pgtest.Main(m) }
