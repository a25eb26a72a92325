package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"
)

// riverUIPrefix is where the admin listener serves River UI.
const riverUIPrefix = "/riverui"

// newRiverUI returns River UI (riverqueue.com/riverui) on client: the
// operators' view of the outbox's jobs, by state, with their attempts,
// errors and arguments, and the means to retry or cancel one. Its
// background services run until ctx ends.
func newRiverUI(ctx context.Context, client *river.Client[pgx.Tx], log *slog.Logger) (http.Handler, error) {
	ui, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(client, nil),
		Logger:    log,
		Prefix:    riverUIPrefix,
	})
	if err != nil {
		return nil, fmt.Errorf("river ui: %w", err)
	}
	if err := ui.Start(ctx); err != nil {
		return nil, fmt.Errorf("start river ui: %w", err)
	}
	return ui, nil
}
