package fakestripe

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// maxBehaviourBytes bounds a behaviour body; a real one is under 200 bytes.
const maxBehaviourBytes = 4 << 10

// RegisterDemo mounts the demo control of a provider that runs as a process
// of its own (`web provider`), where the shop's /api/demo/provider cannot
// reach it: GET and PUT {prefix}/behaviour, with the body of Behaviour's
// JSON. It takes the same bearer secret as the charges API, so only a
// holder of the secret (the chaos harness, an operator) can inject faults.
// It is for demos and tests, never a provider a real shop would call.
func (p *Provider) RegisterDemo(g *echo.Group) {
	g.Use(p.renderErrors, p.authenticate)
	g.GET("/behaviour", p.getBehaviour)
	g.PUT("/behaviour", p.putBehaviour)
}

func (p *Provider) getBehaviour(c echo.Context) error {
	return c.JSON(http.StatusOK, p.Behaviour())
}

// putBehaviour sets the behaviour of the following charging calls.
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
