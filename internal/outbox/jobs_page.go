package outbox

import (
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// JobsPage is the operators' view of the outbox: the latest jobs, of one
// state when ?state= names it, with their attempts and errors. It is served
// on the admin listener only (ADMIN_ADDR), like the metrics: job arguments
// name customers and orders. River UI (riverqueue.com/riverui) would do
// more; this page needs no second module and no frontend build.
func JobsPage(client *river.Client[pgx.Tx]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		params := river.NewJobListParams().First(200).OrderBy(river.JobListOrderByID, river.SortOrderDesc)
		state := rivertype.JobState(r.URL.Query().Get("state"))
		if state != "" {
			params = params.States(state)
		}
		res, err := client.JobList(r.Context(), params)
		if err != nil {
			http.Error(w, "list jobs: "+err.Error(), http.StatusInternalServerError)
			return
		}
		view := jobsView{State: string(state), States: rivertype.JobStates()}
		for _, j := range res.Jobs {
			row := jobRow{ID: j.ID, Kind: j.Kind, State: string(j.State), Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
				Args: string(j.EncodedArgs), Created: j.CreatedAt.UTC().Format(time.DateTime)}
			if j.FinalizedAt != nil {
				row.Finalized = j.FinalizedAt.UTC().Format(time.DateTime)
			}
			for _, e := range j.Errors {
				row.Errors = append(row.Errors, fmt.Sprintf("attempt %d: %s", e.Attempt, e.Error))
			}
			view.Jobs = append(view.Jobs, row)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := jobsTemplate.Execute(w, view); err != nil {
			http.Error(w, "render jobs: "+err.Error(), http.StatusInternalServerError)
		}
	})
}

type jobsView struct {
	State  string
	States []rivertype.JobState
	Jobs   []jobRow
}

type jobRow struct {
	ID                   int64
	Kind, State, Args    string
	Attempt, MaxAttempts int
	Created, Finalized   string
	Errors               []string
}

var jobsTemplate = template.Must(template.New("jobs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Jobs</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}code{font-size:12px}</style>
</head><body>
<h1>Outbox jobs</h1>
<p>Filter: <a href="?">all</a>{{range .States}} · <a href="?state={{.}}">{{.}}</a>{{end}}</p>
<table data-testid="jobs">
<tr><th>ID</th><th>Kind</th><th>State</th><th>Attempt</th><th>Args</th><th>Created</th><th>Finalized</th><th>Errors</th></tr>
{{range .Jobs}}<tr data-testid="job" data-state="{{.State}}">
<td>{{.ID}}</td><td>{{.Kind}}</td><td>{{.State}}</td><td>{{.Attempt}} / {{.MaxAttempts}}</td>
<td><code>{{.Args}}</code></td><td>{{.Created}}</td><td>{{.Finalized}}</td>
<td>{{range .Errors}}<div>{{.}}</div>{{end}}</td></tr>
{{else}}<tr><td colspan="8">No jobs{{if .State}} in state {{.State}}{{end}}.</td></tr>{{end}}
</table></body></html>
`))
