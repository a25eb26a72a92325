package mailcatcher

import (
	"encoding/json"
	"net/http"
)

// Handler serves the caught mail over HTTP for whoever shows it from
// another process (the shop's admin listener, at /mail, with
// MAIL_CATCHER_URL): GET /messages is every kept message, oldest first, as
// JSON ({"smtp": address, "messages": [...]}, Raw in base64). The catcher
// runs beside the shop, never in it: the shop's binary links no mail server.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /messages", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(Listing{SMTP: s.Addr(), Messages: s.Messages()})
	})
	return mux
}

// Listing is the body of GET /messages.
type Listing struct {
	SMTP     string    `json:"smtp"`
	Messages []Message `json:"messages"`
}
