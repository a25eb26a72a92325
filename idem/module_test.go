package idem_test

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The core's go.mod requires pgx and nothing web: each web framework's
// adapter is a module of its own (idemecho, idemecho5), so an app takes in
// only the framework it uses. A new direct requirement is a decision, made
// here.
func TestCoreRequiresNoWebFramework(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"github.com/jackc/pgx/v5"}
	inBlock := false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inBlock:
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for _, web := range []string{"labstack/echo", "gin-gonic", "go-chi", "gorilla", "gofiber", "a-h/templ"} {
			if strings.Contains(fields[0], web) {
				t.Errorf("go.mod requires %s: a web framework belongs in an adapter's module", fields[0])
			}
		}
		if !strings.Contains(line, "// indirect") && !slices.Contains(allowed, fields[0]) {
			t.Errorf("go.mod requires %s directly: the core's direct requirements are %v", fields[0], allowed)
		}
	}
}
