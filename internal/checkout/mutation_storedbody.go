//go:build mutation_storedbody

package checkout

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"exactlyonce/internal/db"
)

// The mutation "the stored answer is not the answer sent": the finish
// stores the receipt re-encoded (its members in another order, the same
// JSON value) while the first answer is sent as it was encoded. Every
// replay then differs from the original by its bytes, as a shop that
// renders its replays again, rather than storing the bytes it sent, does.
func init() {
	mutations = append(mutations, mutation{engine: func(e *Engine) {
		stored := e.finish
		e.finish = func(ctx context.Context, p db.FinishOrderParams) (uuid.UUID, error) {
			var v map[string]any
			if err := json.Unmarshal(p.ResponseBody, &v); err == nil {
				if b, err := json.Marshal(v); err == nil {
					p.ResponseBody = b
				}
			}
			return stored(ctx, p)
		}
	}})
}
