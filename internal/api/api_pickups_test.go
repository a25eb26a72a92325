package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// The pickup endpoint is protected by the kit's middleware alone: these
// tests are its end-to-end proof on a real route.
func TestPickupAPI(t *testing.T) {
	h := apptest.New(t)
	c := h.NewCustomer(t)
	reserve := func(key, body string) apptest.Response {
		headers := []string{"Authorization", "Bearer " + c.Token}
		if key != "" {
			headers = append(headers, "Idempotency-Key", key)
		}
		return h.Do(t, http.MethodPost, "/api/pickups", body, headers...)
	}

	first := reserve(`"p-1"`, `{"slot": "mon-am", "name": "Ada"}`)
	if first.Status != http.StatusCreated || first.Header.Get("Location") == "" {
		t.Fatalf("first: got %d %s, want 201 with a Location", first.Status, first.Body)
	}

	t.Run("a retry with the body's members in another order replays the answer", func(t *testing.T) {
		again := reserve(`p-1`, `{"name":"Ada","slot":"mon-am"}`)
		if again.Status != http.StatusCreated || string(again.Body) != string(first.Body) ||
			again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("got %d %s %v, want the first answer replayed", again.Status, again.Body, again.Header)
		}
		if got := h.Do(t, http.MethodGet, first.Header.Get("Location"), "", "Authorization", "Bearer "+c.Token); got.Status != http.StatusOK {
			t.Fatalf("GET the reservation: got %d %s", got.Status, got.Body)
		}
	})

	t.Run("racing requests with one key reserve once", func(t *testing.T) {
		var wg sync.WaitGroup
		statuses := make([]int, 6)
		for i := range statuses {
			wg.Go(func() { statuses[i] = reserve(`"p-race"`, `{"slot": "sat-am", "name": "Ada"}`).Status })
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
			default:
				t.Fatalf("got statuses %v, want 201s and 409s", statuses)
			}
		}
		if created == 0 || h.Count(t, `SELECT count(*) FROM pickup_reservations`) != 2 {
			t.Fatalf("got statuses %v and %d reservations, want 2 reservations in all", statuses, h.Count(t, `SELECT count(*) FROM pickup_reservations`))
		}
	})

	for _, tc := range []struct {
		name, key, body, problem string
		status                   int
	}{
		{"the key with another body is refused", `"p-1"`, `{"slot": "mon-pm", "name": "Ada"}`, "/problems/idempotency-key-reused", 422},
		{"no key is refused", ``, `{"slot": "mon-am", "name": "Ada"}`, "/problems/missing-idempotency-key", 400},
		{"a malformed key is refused", `"p-2`, `{"slot": "mon-am", "name": "Ada"}`, "/problems/invalid-idempotency-key", 400},
		{"an unknown slot is refused", `"p-3"`, `{"slot": "sun-am", "name": "Ada"}`, "/problems/invalid-request", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := reserve(tc.key, tc.body)
			var p struct{ Type string }
			r.JSON(t, &p)
			if r.Status != tc.status || p.Type != tc.problem {
				t.Fatalf("got %d %s, want %d %s", r.Status, p.Type, tc.status, tc.problem)
			}
		})
	}
}

// A reservation whose COMMIT fails after the kit's finish went through in
// its transaction stored nothing: the client is told 503 with Retry-After
// (not a panic and no answer), the key is freed, and the retry with the same
// key reserves. The failure is a deferred constraint trigger, which runs at
// COMMIT, after every statement succeeded.
func TestPickupAPIAnswers503WhenTheCommitFails(t *testing.T) {
	h := apptest.New(t)
	c := h.NewCustomer(t)
	if _, err := h.DB.Pool.Exec(context.Background(), `
CREATE TABLE refuse_commits (refuse boolean);
INSERT INTO refuse_commits VALUES (true);
CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT FROM refuse_commits) THEN
        RAISE EXCEPTION 'refused at commit' USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON pickup_reservations
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`); err != nil {
		t.Fatal(err)
	}
	reserve := func() apptest.Response {
		return h.Do(t, http.MethodPost, "/api/pickups", `{"slot": "mon-am", "name": "Ada"}`,
			"Authorization", "Bearer "+c.Token, "Idempotency-Key", `"commit-1"`)
	}
	got := reserve()
	apptest.WantProblem(t, got, problem.Unavailable)
	if got.Header.Get("Retry-After") == "" {
		t.Errorf("got no Retry-After, want one")
	}
	if n := h.Count(t, `SELECT count(*) FROM idem_keys WHERE key = '"commit-1"'`); n != 0 {
		t.Fatalf("got %d keys after the failed commit, want the key freed", n)
	}
	if _, err := h.DB.Pool.Exec(context.Background(), `DELETE FROM refuse_commits`); err != nil {
		t.Fatal(err)
	}
	if again := reserve(); again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry: got %d %s, want a fresh 201", again.Status, again.Body)
	}
}
