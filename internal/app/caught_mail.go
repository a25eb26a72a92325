package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// caughtMail is the demo's mail catcher's listing (GET {MAIL_CATCHER_URL}/
// messages), read over HTTP: the catcher runs beside the shop, never in it.
// The fields are those the /mail page shows.
type caughtMail struct {
	SMTP     string `json:"smtp"`
	Messages []struct {
		From, MessageID, Subject, Body string
		To                             []string
		Raw                            []byte
		ReceivedAt                     time.Time
	} `json:"messages"`
}

// caughtMailTimeout bounds the read of the catcher's listing: the page
// says the catcher is down rather than hang.
const caughtMailTimeout = 5 * time.Second

// readCaughtMail reads the catcher's listing at base.
func readCaughtMail(ctx context.Context, base string) (caughtMail, error) {
	ctx, cancel := context.WithTimeout(ctx, caughtMailTimeout)
	defer cancel()
	var out caughtMail
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/messages", nil)
	if err != nil {
		return out, fmt.Errorf("read caught mail: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out, fmt.Errorf("read caught mail: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("read caught mail: the catcher answered %s", resp.Status)
	}
	// A catcher keeps at most 16 MiB of mail; its JSON is larger by base64.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&out); err != nil {
		return out, fmt.Errorf("read caught mail: %w", err)
	}
	return out, nil
}
