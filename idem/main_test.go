package idem_test

import (
	"testing"

	"exactlyonce/idem/idemtest"
)

// The kit's tests need nothing of the application: each gets a database of
// its own, with the kit's migrations, from idemtest on the server that
// TEST_DATABASE_URL names (`make test/kit` starts one).
func TestMain(m *testing.M) { idemtest.Main(m) }
