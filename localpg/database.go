package localpg

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// OwnDatabase creates the database name on the server that serverURL (a
// URL, not a key=value string) reaches, unless it exists, and returns the
// URL of it: how make run and the load test give the fake Stripe a
// database of its own beside the shop's.
func OwnDatabase(ctx context.Context, serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("database %s: %q is not a URL", name, serverURL)
	}
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", fmt.Errorf("database %s: %w", name, err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", fmt.Errorf("database %s: %w", name, err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	u.Path = "/" + name
	return u.String(), nil
}
