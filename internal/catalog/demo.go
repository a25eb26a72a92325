package catalog

import (
	"context"
	"fmt"

	"exactlyonce/internal/db"
)

// Demo is the starter catalog that Seed adds: enough to shop with.
var Demo = []Product{
	{SKU: "mug-espresso", Name: "Espresso mug", Price: 1200, Currency: "eur"},
	{SKU: "tee-idempotent", Name: "T-shirt “Exactly once”", Price: 2900, Currency: "eur"},
	{SKU: "book-retries", Name: "Field guide to retries", Price: 3450, Currency: "eur"},
	{SKU: "sticker-pack", Name: "Sticker pack", Price: 450, Currency: "eur"},
	{SKU: "hoodie-409", Name: "Hoodie “409 Conflict”", Price: 5900, Currency: "eur"},
}

// Seed adds the demo products that are missing and leaves existing rows as
// they are, so running it on every start is harmless.
func Seed(ctx context.Context, q *db.Queries) error {
	for _, p := range Demo {
		err := q.SeedProduct(ctx, db.SeedProductParams{Sku: p.SKU, Name: p.Name, Price: p.Price, Currency: p.Currency})
		if err != nil {
			return fmt.Errorf("seed product %s: %w", p.SKU, err)
		}
	}
	return nil
}
