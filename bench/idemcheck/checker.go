package idemcheck

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Checker runs the scenarios of one profile against one API.
type Checker struct {
	cfg     Config
	profile Profile
	http    *http.Client
	creds   []Credential
}

// New prepares a check of cfg under profile. It sends nothing yet.
func New(cfg Config, profile Profile) (*Checker, error) {
	cfg = cfg.withDefaults(profile)
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Checker{
		cfg:     cfg,
		profile: profile,
		http:    &http.Client{Timeout: time.Duration(cfg.Timeout)},
		creds:   cfg.Credentials,
	}, nil
}

// scenario is one check; it returns results because one exchange (a
// request and its replay) can answer several scenarios.
type scenario func(ctx context.Context) []Result

// Run registers the callers it lacks, runs every scenario in order and
// returns the scorecard. A scenario the profile skips is not sent at all.
func (c *Checker) Run(ctx context.Context) (*Scorecard, error) {
	if err := c.registerCallers(ctx); err != nil {
		return nil, err
	}
	card := &Scorecard{Profile: c.profile.Name, About: c.profile.About, Target: c.cfg.Method + " " + c.cfg.BaseURL + c.cfg.Path}
	for _, s := range []scenario{
		c.missingKey, c.malformedKey, c.oversizedKey, c.replay, c.fingerprint,
		c.concurrent, c.scoping, c.reuseAfterValidationError, c.retentionPolicy,
	} {
		for _, r := range s(ctx) {
			r.Level = c.profile.Levels[r.ID]
			if r.Level == Skip && r.Outcome != Skipped {
				r.Outcome, r.Detail = Skipped, "not required by this profile; "+r.Detail
			}
			card.Results = append(card.Results, r)
		}
	}
	return card, nil
}

// wants reports whether the profile asks for any of the scenarios, so that
// a skipped scenario costs no requests.
func (c *Checker) wants(ids ...string) bool {
	for _, id := range ids {
		if c.profile.Levels[id] != Skip {
			return true
		}
	}
	return false
}

// registerCallers creates callers through the API until there are two, when
// the config says how. Without Register, one credential is enough for all
// but the scoping scenario, and none for an API without auth.
func (c *Checker) registerCallers(ctx context.Context) error {
	r := c.cfg.Register
	if r == nil {
		if len(c.creds) == 0 {
			c.creds = []Credential{{}}
		}
		return nil
	}
	for len(c.creds) < 2 {
		resp := c.do(ctx, http.MethodPost, r.Path, Credential{}, nil, r.Body)
		if !resp.success() {
			return fmt.Errorf("register a caller at %s: %s", r.Path, resp)
		}
		tok, err := pointer(resp.Body, r.TokenPointer)
		if err != nil {
			return fmt.Errorf("register a caller: %w", err)
		}
		format := r.Format
		if format == "" {
			format = "%s"
		}
		c.creds = append(c.creds, Credential{Headers: map[string]string{r.Header: fmt.Sprintf(format, tok)}})
	}
	return nil
}
