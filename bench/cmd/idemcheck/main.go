// Command idemcheck checks an API's idempotency keys against a profile (ietf,
// stripe or shop) and prints a scorecard. It exits 1 when a MUST fails and 2
// on a usage or setup error. See "Check your own API" in the README.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"exactlyonce/bench/idemcheck"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// authFlags collects repeated -auth flags, one credential each.
type authFlags []string

func (a *authFlags) String() string     { return strings.Join(*a, ", ") }
func (a *authFlags) Set(v string) error { *a = append(*a, v); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("idemcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfgPath = fs.String("config", "", "JSON config file; flags override it")
		profile = fs.String("profile", "ietf", "profile: "+strings.Join(idemcheck.ProfileNames(), ", "))
		format  = fs.String("format", "text", "scorecard format: text, json or markdown")
		auth    authFlags
		flagCfg idemcheck.Config
		n       = fs.Int("n", 0, "concurrent duplicates to send (default 10)")
		timeout = fs.Duration("timeout", 0, "timeout of each request (default 30s)")
	)
	fs.StringVar(&flagCfg.BaseURL, "base", "", "base URL of the API, e.g. http://127.0.0.1:8080")
	fs.StringVar(&flagCfg.Method, "method", "", "method of the idempotent operation (default POST)")
	fs.StringVar(&flagCfg.Path, "path", "", "path of the idempotent operation, e.g. /api/orders")
	fs.StringVar(&flagCfg.KeyHeader, "key-header", "", "name of the key header (default Idempotency-Key)")
	fs.StringVar(&flagCfg.Body, "body", "", "JSON body template; "+idemcheck.Placeholder+" becomes a small integer")
	fs.StringVar(&flagCfg.InvalidBody, "invalid-body", "", "a body the API rejects with a 4xx before executing")
	fs.StringVar(&flagCfg.IDPointer, "id-pointer", "", "JSON pointer to the created resource's id (default: the Location header)")
	fs.StringVar(&flagCfg.PolicyPath, "policy-path", "", "path of the published retention policy (JSON)")
	fs.StringVar(&flagCfg.RetentionPointer, "retention-pointer", "", "JSON pointer to the retention in seconds in the policy")
	fs.Var(&auth, "auth", `a credential as "Header: value"; give it twice for the scoping scenario`)
	if err := fs.Parse(args); err != nil {
		return 2
	}

	var cfg idemcheck.Config
	if *cfgPath != "" {
		var err error
		if cfg, err = idemcheck.LoadConfig(*cfgPath); err != nil {
			fmt.Fprintln(stderr, "idemcheck:", err)
			return 2
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "base":
			cfg.BaseURL = flagCfg.BaseURL
		case "method":
			cfg.Method = flagCfg.Method
		case "path":
			cfg.Path = flagCfg.Path
		case "key-header":
			cfg.KeyHeader = flagCfg.KeyHeader
		case "body":
			cfg.Body = flagCfg.Body
		case "invalid-body":
			cfg.InvalidBody = flagCfg.InvalidBody
		case "id-pointer":
			cfg.IDPointer = flagCfg.IDPointer
		case "policy-path":
			cfg.PolicyPath = flagCfg.PolicyPath
		case "retention-pointer":
			cfg.RetentionPointer = flagCfg.RetentionPointer
		case "n":
			cfg.Concurrency = *n
		case "timeout":
			cfg.Timeout = idemcheck.Duration(*timeout)
		}
	})
	if len(auth) > 0 {
		cfg.Credentials = nil
		for _, a := range auth {
			name, value, err := idemcheck.ParseHeader(a)
			if err != nil {
				fmt.Fprintln(stderr, "idemcheck:", err)
				return 2
			}
			cfg.Credentials = append(cfg.Credentials, idemcheck.Credential{Headers: map[string]string{name: value}})
		}
	}

	p, err := idemcheck.LookupProfile(*profile)
	if err != nil {
		fmt.Fprintln(stderr, "idemcheck:", err)
		return 2
	}
	checker, err := idemcheck.New(cfg, p)
	if err != nil {
		fmt.Fprintln(stderr, "idemcheck:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	card, err := checker.Run(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "idemcheck:", err)
		return 2
	}
	switch *format {
	case "json":
		err = card.WriteJSON(stdout)
	case "markdown", "md":
		err = card.WriteMarkdown(stdout)
	default:
		err = card.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "idemcheck:", err)
		return 2
	}
	if !card.OK() {
		return 1
	}
	return 0
}
