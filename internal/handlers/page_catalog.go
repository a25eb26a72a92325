package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// catalogPage is GET /: every product, with how many of each the cart
// holds and, for one that keeps stock, how many are left. ?done=added
// with ?sku= is where the catalog's add button comes back to
// (setCartQuantity): the product's card says it was added.
func (h *Handler) catalogPage(c echo.Context) error {
	ctx := c.Request().Context()
	page := views.CatalogPage{CSRF: csrfToken(c)}
	if c.QueryParam("done") == "added" {
		note, err := h.cartFlash(c)
		if err != nil {
			return err
		}
		page.Added, page.AddedNote = c.QueryParam("sku"), note
	}
	products, err := h.catalog.Products(ctx)
	if err != nil {
		return err
	}
	left, err := h.catalog.Left(ctx)
	if err != nil {
		return err
	}
	inCart := map[string]int{}
	if id, ok := shopper(c); ok {
		cart, _, err := h.carts.Browser(ctx, id)
		if err != nil {
			return err
		}
		for _, it := range cart.Items {
			inCart[it.SKU] = it.Quantity
		}
		countCart(c, cart.Items)
	}
	for _, p := range products {
		v := views.Product{
			SKU: p.SKU, Name: p.Name, Description: p.Description, Price: views.Money{Minor: p.Price, Currency: p.Currency}, InCart: inCart[p.SKU],
		}
		if n, kept := left[p.SKU]; kept {
			v.Left = &n
		}
		page.Products = append(page.Products, v)
	}
	return web.Render(c, http.StatusOK, views.Catalog(page))
}

// viewLines formats priced lines for a page.
func viewLines(lines []catalog.Line, currency string) []views.Line {
	out := make([]views.Line, len(lines))
	for i, l := range lines {
		out[i] = views.Line{
			SKU: l.SKU, Name: l.Name, Quantity: l.Quantity,
			UnitPrice: views.Money{Minor: l.UnitPrice, Currency: currency}, LineTotal: views.Money{Minor: l.LineTotal, Currency: currency},
		}
	}
	return out
}
