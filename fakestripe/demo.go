package fakestripe

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// maxBehaviourBytes bounds a behaviour body; a real one is under 200 bytes.
const maxBehaviourBytes = 4 << 10

// RegisterDemo mounts the fake's own control API, which no Stripe has: GET
// and PUT {prefix}/behaviour, with the body of Behaviour's JSON (the faults
// to inject); GET {prefix}/intents?metadata[k]=v, the intents whose
// metadata holds those pairs; GET {prefix}/succeeded, how many intents
// succeeded. The lab, the chaos harness and the load test reach the fake
// through it (Control is its client). It takes the same bearer secret as the charges API, so only a
// holder of the secret (the chaos harness, an operator) can inject faults.
// It is for demos and tests, never a provider a real shop would call.
func (p *Provider) RegisterDemo(g *echo.Group) {
	g.Use(p.renderErrors, p.authenticate)
	g.GET("/behaviour", p.getBehaviour)
	g.PUT("/behaviour", p.putBehaviour)
	g.GET("/intents", p.getIntents)
	g.GET("/succeeded", p.getSucceeded)
}

// getIntents is GET {prefix}/intents?metadata[k]=v…: every intent whose
// metadata holds all the pairs given (at least one), oldest first.
func (p *Provider) getIntents(c echo.Context) error {
	match := map[string]string{}
	for k, v := range c.QueryParams() {
		name, ok := strings.CutPrefix(k, "metadata[")
		if !ok || !strings.HasSuffix(name, "]") || len(v) != 1 {
			return invalidRequest("parameter_unknown", k, "Only metadata[key]=value parameters, each once, are allowed.")
		}
		match[strings.TrimSuffix(name, "]")] = v[0]
	}
	if len(match) == 0 {
		return invalidRequest("parameter_missing", "metadata", "Name at least one metadata[key]=value.")
	}
	intents, err := p.IntentsByMetadata(c.Request().Context(), match)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"data": intents})
}

// getSucceeded is GET {prefix}/succeeded: {"succeeded": n}.
func (p *Provider) getSucceeded(c echo.Context) error {
	n, err := p.Succeeded(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]int64{"succeeded": n})
}

func (p *Provider) getBehaviour(c echo.Context) error {
	return c.JSON(http.StatusOK, p.Behaviour())
}

// putBehaviour sets the behaviour of the following charging calls and
// refunds.
// Setting it twice is setting it once, so it needs no idempotency key.
func (p *Provider) putBehaviour(c echo.Context) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxBehaviourBytes))
	if err != nil {
		return invalidRequest("body_unreadable", "", "The body could not be read.")
	}
	var b Behaviour
	if err := json.Unmarshal(body, &b); err != nil {
		return invalidRequest("behaviour_invalid", "", err.Error())
	}
	if err := p.SetBehaviour(b); err != nil {
		return invalidRequest("behaviour_invalid", "", err.Error())
	}
	p.log.InfoContext(c.Request().Context(), "fakestripe: behaviour set", "delay", b.Delay, "fail", b.Fail.String())
	return c.JSON(http.StatusOK, p.Behaviour())
}
