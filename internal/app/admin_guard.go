package app

import (
	"crypto/subtle"
	"net"
	"net/http"
	"slices"
	"strings"

	"exactlyonce/internal/hosts"
)

// guardAdmin is what stands between the admin listener and whoever can
// reach it, including a page in the operator's browser:
//
//   - the Host allow-list (the names ADMIN_ADDR is reached by and
//     ALLOWED_HOSTS'), against DNS rebinding;
//   - cross-origin protection on every unsafe method (net/http's
//     CrossOriginProtection: Sec-Fetch-Site, or Origin against Host), so a
//     page of another site cannot send a "simple" text/plain POST that needs
//     no preflight, with or without the operator's cached credentials; and
//     on every GET that does something (sideEffects: the profiler, whose
//     CPU profile and execution trace run for seconds and whose heap
//     profile may force a GC), which an <img> on any page could send;
//   - no framing, on every answer (River UI's and the refusals too):
//     X-Frame-Options and CSP frame-ancestors, so that no page can overlay
//     the operator's buttons (the admin pages set a stricter CSP of their
//     own, with the same frame-ancestors);
//   - River UI behind the operator's credential (ADMIN_TOKEN) when there is
//     one, and read-only when there is none;
//   - outbox jobs are never deleted or cancelled through River UI, token or
//     not: the "order placed" jobs exist exactly when their order does, and
//     an order whose jobs are gone never gets its points or its mail. A job
//     that keeps failing is retried, or left to fail; an operator who must
//     remove one does it in SQL, knowing what it costs.
//
// Reading the metrics, the profiles and the caught mail stays open to
// whoever reaches the listener, which belongs on loopback or the operators'
// network.
func (a *App) guardAdmin(next http.Handler, ln net.Listener) http.Handler {
	names := slices.Clone(a.cfg.AdminHosts)
	if own, err := hosts.OfAddress(ln.Addr().String()); err == nil {
		names = append(names, own...)
	}
	allowed := hosts.New(names)
	sameOrigin := http.NewCrossOriginProtection()
	token := a.cfg.AdminToken
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		unsafe := r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
		switch {
		case !allowed.Allows(r.Host):
			http.Error(w, "misdirected request: this admin listener does not answer for that host name", http.StatusMisdirectedRequest)
			return
		case unsafe && sameOrigin.Check(r) != nil:
			http.Error(w, "forbidden: a cross-origin request may not change anything here", http.StatusForbidden)
			return
		case !unsafe && sideEffects(r.URL.Path) && sameOrigin.Check(asWrite(r)) != nil:
			http.Error(w, "forbidden: a cross-origin request may not run the profiler", http.StatusForbidden)
			return
		}
		if !strings.HasPrefix(r.URL.Path, riverUIPrefix+"/") {
			next.ServeHTTP(w, r)
			return
		}
		switch {
		case token != "" && !operator(r, token):
			w.Header().Set("WWW-Authenticate", `Basic realm="exactlyonce admin", charset="UTF-8"`)
			http.Error(w, "unauthorized: River UI asks for the operator's credential (ADMIN_TOKEN)", http.StatusUnauthorized)
		case unsafe && token == "":
			http.Error(w, "forbidden: River UI is read-only without an operator credential; set ADMIN_TOKEN to act on jobs", http.StatusForbidden)
		case unsafe && removesJobs(r.URL.Path):
			http.Error(w, "conflict: outbox jobs are never deleted or cancelled, or their order would lose its points and its mail; retry the job instead", http.StatusConflict)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// operator reports whether r carries the admin token, as a basic-auth
// password (any user name: a browser's login prompt) or a bearer token (a
// script), compared in constant time.
func operator(r *http.Request, token string) bool {
	given := ""
	if _, pass, ok := r.BasicAuth(); ok {
		given = pass
	} else if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		given = strings.TrimSpace(t)
	}
	return given != "" && subtle.ConstantTimeCompare([]byte(given), []byte(token)) == 1
}

// removesJobs reports whether a River UI API path deletes or cancels jobs.
func removesJobs(path string) bool {
	switch strings.TrimPrefix(path, riverUIPrefix) {
	case "/api/jobs/delete", "/api/jobs/cancel":
		return true
	}
	return false
}

// sideEffects reports whether a GET of path does something beyond reading:
// the profiler's (a CPU profile or trace runs for ?seconds=, a heap
// profile may run a GC with ?gc=1; its index and symbols go with them, a
// page of another site has no business there).
func sideEffects(path string) bool {
	return strings.HasPrefix(path, "/debug/pprof/")
}

// asWrite is r as a POST, for CrossOriginProtection, which lets every GET
// through: the same Sec-Fetch-Site and Origin rules then judge a GET with
// side effects. A request without either header (curl, go tool pprof)
// passes, as a write does.
func asWrite(r *http.Request) *http.Request {
	w := r.WithContext(r.Context())
	w.Method = http.MethodPost
	return w
}
