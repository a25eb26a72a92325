package database_test

import (
	"context"
	"errors"
	"testing"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestInTxRetriesSerializationFailures(t *testing.T) {
	t.Parallel()
	d := database.New(pgtest.NewPool(t))

	t.Run("then succeeds", func(t *testing.T) {
		runs := 0
		err := d.InTx(context.Background(), func(q *db.Queries) error {
			runs++
			if runs < 3 {
				return database.ErrSerialization
			}
			return nil
		})
		if err != nil || runs != 3 {
			t.Errorf("got %d runs and error %v, want 3 runs and nil", runs, err)
		}
	})
	t.Run("gives up", func(t *testing.T) {
		runs := 0
		err := d.InTx(context.Background(), func(q *db.Queries) error {
			runs++
			return database.ErrSerialization
		})
		if !errors.Is(err, database.ErrSerialization) || runs != 3 {
			t.Errorf("got %d runs and error %v, want 3 runs and ErrSerialization", runs, err)
		}
	})
	t.Run("other errors are not retried", func(t *testing.T) {
		runs := 0
		boom := errors.New("boom")
		err := d.InTx(context.Background(), func(q *db.Queries) error {
			runs++
			return boom
		})
		if !errors.Is(err, boom) || runs != 1 {
			t.Errorf("got %d runs and error %v, want 1 run and boom", runs, err)
		}
	})
}
