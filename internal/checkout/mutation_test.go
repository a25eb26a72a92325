//go:build !mutation_nofence && !mutation_replayscope && !mutation_storedbody && !fault_pausefinish

package checkout

import "testing"

// A mutation file without its build tag would put a removed guarantee into
// the production binary: the untagged build must carry none.
func TestUntaggedBuildCarriesNoMutation(t *testing.T) {
	if got := len(mutations); got != 0 {
		t.Fatalf("got %d mutations compiled in, want 0: a mutation_*.go or fault_*.go file lacks its //go:build tag", got)
	}
}
