package catalog

import (
	"context"
	"fmt"

	"exactlyonce/internal/db"
)

// Demo is the starter catalog that Seed adds: enough to shop with.
var Demo = []Product{
	{SKU: "mug-espresso", Name: "Espresso mug", Price: 1200, Currency: "eur",
		Description: "Stoneware, 90 ml: one shot, poured once."},
	{SKU: "tee-idempotent", Name: "T-shirt “Exactly once”", Price: 2900, Currency: "eur",
		Description: "Organic cotton, printed front; wash it twice, it stays one shirt."},
	{SKU: "book-retries", Name: "Field guide to retries", Price: 3450, Currency: "eur",
		Description: "Paperback, 240 pages on backoff, keys and knowing when to stop."},
	{SKU: "sticker-pack", Name: "Sticker pack", Price: 450, Currency: "eur",
		Description: "Six vinyl stickers for laptops that have seen a 409."},
	{SKU: "hoodie-409", Name: "Hoodie “409 Conflict”", Price: 5900, Currency: "eur",
		Description: "Heavy fleece with a kangaroo pocket, for long incident calls."},
}

// Seed adds the demo products that are missing and leaves existing rows as
// they are, but for an empty description, which it fills (a database from
// before descriptions); running it on every start is harmless.
func Seed(ctx context.Context, q *db.Queries) error {
	for _, p := range Demo {
		err := q.SeedProduct(ctx, db.SeedProductParams{Sku: p.SKU, Name: p.Name, Price: p.Price, Currency: p.Currency, Description: p.Description})
		if err != nil {
			return fmt.Errorf("seed product %s: %w", p.SKU, err)
		}
	}
	return nil
}
