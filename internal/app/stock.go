package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// maxReceived bounds one delivery of stock, so that a typo (an extra zero
// or three) is refused rather than put on sale.
const maxReceived = 100_000

const stockUsage = "usage: web stock (list what is left) or web stock receive SKU N (N units came in, 1 to 100000)"

// stock is `web stock`: the operator's view of the products that keep
// stock (on hand, held by orders still running, sold, received), and
// `web stock receive SKU N` for a delivery; a product that keeps no stock
// starts keeping it with its first delivery (migration 00180).
func stock(ctx context.Context, pool *pgxpool.Pool, args []string, out io.Writer) error {
	q := database.New(pool)
	switch {
	case len(args) == 0:
		return listStock(ctx, q, out)
	case len(args) == 3 && args[0] == "receive":
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 1 || n > maxReceived {
			return fmt.Errorf("stock receive: %q is not a number of units from 1 to %d", args[2], maxReceived)
		}
		row, err := q.ReceiveStock(ctx, db.ReceiveStockParams{Sku: args[1], Quantity: int32(n)})
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "23503" { // foreign_key_violation
			return fmt.Errorf("stock receive: no product %q (web stock lists those that keep stock; the catalog lists them all)", args[1])
		}
		if err != nil {
			return fmt.Errorf("stock receive: %w", err)
		}
		_, err = fmt.Fprintf(out, "%s: %d received, %d on hand, %d received in all\n", args[1], n, row.OnHand, row.Received)
		return err
	}
	return errors.New(stockUsage)
}

func listStock(ctx context.Context, q *database.DB, out io.Writer) error {
	rows, err := q.StockLevels(ctx)
	if err != nil {
		return fmt.Errorf("stock: %w", err)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(out, "No product keeps stock: every one is made to order. web stock receive SKU N starts one.")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "sku\tname\ton hand\treserved\tsold\treceived\t")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t\n", r.Sku, r.Name, r.OnHand, r.Reserved, r.Sold, r.Received)
	}
	return w.Flush()
}
