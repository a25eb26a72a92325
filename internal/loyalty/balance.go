package loyalty

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"exactlyonce/internal/db"
)

// Balance is a customer's points: the sum over their ledger rows.
func Balance(ctx context.Context, q *db.Queries, customer uuid.UUID) (int64, error) {
	points, err := q.PointsBalance(ctx, customer)
	if err != nil {
		return 0, fmt.Errorf("points balance: %w", err)
	}
	return points, nil
}
