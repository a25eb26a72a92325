package problem

import "exactlyonce/idem"

// kitKind is the row of one of the kit's refusals: its type, title and
// status are what the kit answers for err (idem.RefusalOf), so the shop's
// API cannot drift from the kit's adapters; the shop adds only what it
// tells a developer (about, on /problems/{slug}) and a shopper (page).
func kitKind(err error, about string, page Page) Kind {
	r, ok := idem.RefusalOf(err)
	if !ok {
		panic("problem: " + err.Error() + " is not one of the kit's refusals")
	}
	return Kind{Slug: r.Slug, Title: r.Title, Status: r.Status, About: about, Page: page}
}

// OfKit is the shop's row for one of the kit's refusals: the kit's own row
// (kitKind) when the shop has one, else the row the shop answers it with
// (answeredAs), else Internal: the refusal is then one no request of the
// shop's meets (a key not found outside a status route).
func OfKit(r idem.Refusal) Kind {
	if k, ok := kitRows[r.Slug]; ok {
		return k
	}
	return Internal
}

// kitRows holds, by the kit's slug, the row of every refusal of the kit
// the shop answers.
var kitRows = rowsBySlug(
	[]Kind{MissingKey, InvalidKey, FormRefused, KeyReused, KeyInUse, LockLost, RequestTimeout, Unavailable},
	// The kit's refusals the shop answers with a row of its own. A write
	// that did not commit is, to a client, the database failing; a handler
	// that wrote nothing is a bug of the shop's; a body too large for any
	// order is an invalid one.
	answeredAs(idem.ErrNotCommitted, Unavailable),
	answeredAs(idem.ErrNoResponse, Internal),
	answeredAs(idem.ErrBodyTooLarge, InvalidRequest),
)

// kitRow is one row of kitRows: the kit's slug and the shop's row for it.
type kitRow struct {
	slug string
	kind Kind
}

// answeredAs is the shop's row for the kit's refusal of err.
func answeredAs(err error, k Kind) kitRow {
	r, ok := idem.RefusalOf(err)
	if !ok {
		panic("problem: " + err.Error() + " is not one of the kit's refusals")
	}
	return kitRow{r.Slug, k}
}

func rowsBySlug(own []Kind, others ...kitRow) map[string]Kind {
	m := make(map[string]Kind, len(own)+len(others))
	for _, k := range own {
		m[k.Slug] = k
	}
	for _, r := range others {
		m[r.slug] = r.kind
	}
	return m
}
