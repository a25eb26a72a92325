package mailcatcher

import (
	"html/template"
	"net/http"
	"slices"
	"time"
)

// Page lists the caught messages, newest first, each with its headers and
// raw text: the local mail catcher of make run, seen in a browser.
func (s *Server) Page() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msgs := s.Messages()
		slices.Reverse(msgs)
		views := make([]messageView, len(msgs))
		for i, m := range msgs {
			views[i] = messageView{Message: m, Received: m.ReceivedAt.UTC().Format(time.DateTime), Text: string(m.Raw)}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := pageTemplate.Execute(w, struct {
			Addr     string
			Messages []messageView
		}{s.Addr(), views}); err != nil {
			http.Error(w, "render mail: "+err.Error(), http.StatusInternalServerError)
		}
	})
}

type messageView struct {
	Message
	Received, Text string
}

var pageTemplate = template.Must(template.New("mail").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Caught mail</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}article{border:1px solid #ccc;margin:1em 0;padding:1em}pre{white-space:pre-wrap;font-size:12px;background:#f6f6f6;padding:.5em}</style>
</head><body>
<h1>Caught mail</h1>
<p>SMTP on {{.Addr}}; kept in memory until the server stops. Same Message-ID twice means the same message sent twice.</p>
{{range .Messages}}<article data-testid="mail">
<h2>{{.Subject}}</h2>
<p>From {{.From}} to {{range .To}}{{.}} {{end}} at {{.Received}}<br>Message-ID <code>{{.MessageID}}</code></p>
<pre data-testid="mail-body">{{.Body}}</pre>
<details><summary>Raw message</summary><pre>{{.Text}}</pre></details>
</article>{{else}}<p>No mail yet.</p>{{end}}
</body></html>
`))
