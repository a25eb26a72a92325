package idemecho5_test

import (
	"testing"

	"exactlyonce/idem/idemtest"
)

func TestMain(m *testing.M) { idemtest.Main(m) }
