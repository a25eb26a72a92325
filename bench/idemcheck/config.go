package idemcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Placeholder is replaced in Config.Body by a small positive integer, so the
// checker can make requests that differ (for the fingerprint scenario) or
// repeat one exactly (for the replay scenarios). It must stay valid wherever
// it appears: in the shop's body it is a quantity.
const Placeholder = "{{n}}"

// Config says where the idempotent operation is and how to call it. Every
// field can come from a JSON file (LoadConfig) or flags; a profile fills in
// what is left empty (Profile.Defaults).
type Config struct {
	BaseURL   string `json:"base_url"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	KeyHeader string `json:"key_header"`
	// Body is the request body, with Placeholder where a value may vary.
	Body string `json:"body"`
	// InvalidBody is a body the API rejects with a 4xx before executing
	// anything, for the scenario "reuse a key after a validation error".
	// Empty skips that scenario.
	InvalidBody string `json:"invalid_body"`
	// IDPointer is a JSON pointer (RFC 6901) to the created resource's id in
	// a success body; empty means the Location header is the id.
	IDPointer string `json:"id_pointer"`
	// Credentials are the callers' auth headers. Two are needed for the
	// scoping scenario; with fewer, Register makes the rest.
	Credentials []Credential `json:"credentials"`
	Register    *Register    `json:"register"`
	// PolicyPath is where the API publishes its key retention as JSON, and
	// RetentionPointer where the number of seconds is in it. Empty skips the
	// machine-readable check (say where it is documented instead).
	PolicyPath       string `json:"policy_path"`
	RetentionPointer string `json:"retention_pointer"`
	// Concurrency is how many duplicates the concurrency scenario sends at once.
	Concurrency int `json:"concurrency"`
	// Timeout bounds each request.
	Timeout Duration `json:"timeout"`
}

// Credential is the headers that authenticate one caller.
type Credential struct {
	Headers map[string]string `json:"headers"`
}

// Register says how to create a caller through the API itself: POST Body to
// Path, read the token at TokenPointer and send it as Header, formatted by
// Format ("Bearer %s").
type Register struct {
	Path         string `json:"path"`
	Body         string `json:"body"`
	TokenPointer string `json:"token_pointer"`
	Header       string `json:"header"`
	Format       string `json:"format"`
}

// Duration is a time.Duration written as "5s" in JSON.
type Duration time.Duration

// UnmarshalJSON reads a Go duration string such as "10s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// LoadConfig reads a JSON config file. Unknown fields are an error, so a
// misspelt field is not silently ignored.
func LoadConfig(path string) (Config, error) {
	var c Config
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseHeader reads "Name: value" as given on the command line.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return "", "", fmt.Errorf("header %q: want \"Name: value\"", s)
	}
	return strings.TrimSpace(name), strings.TrimSpace(value), nil
}

// withDefaults fills the fields the profile and the user left empty.
func (c Config) withDefaults(p Profile) Config {
	d := p.Defaults
	set := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	set(&c.Method, d.Method)
	set(&c.Method, http.MethodPost)
	set(&c.Path, d.Path)
	set(&c.KeyHeader, d.KeyHeader)
	set(&c.KeyHeader, "Idempotency-Key")
	set(&c.Body, d.Body)
	set(&c.InvalidBody, d.InvalidBody)
	set(&c.IDPointer, d.IDPointer)
	set(&c.PolicyPath, d.PolicyPath)
	set(&c.RetentionPointer, d.RetentionPointer)
	if c.Register == nil && len(c.Credentials) < 2 {
		c.Register = d.Register
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 10
	}
	if c.Timeout <= 0 {
		c.Timeout = Duration(30 * time.Second)
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}

func (c Config) validate() error {
	if c.BaseURL == "" {
		return fmt.Errorf("no base URL")
	}
	if c.Path == "" {
		return fmt.Errorf("no endpoint path")
	}
	return nil
}
