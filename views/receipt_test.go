package views

import (
	"bytes"
	"context"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// Every <dl> on a receipt holds only dt/dd groups (or divs wrapping only
// them), none of which has a role: a dd with role="status" is no longer a
// definition to assistive technology, and axe counts it as a foreign child
// of the list (definition-list, serious). The live region of points on
// their way sits inside the dd.
func TestReceiptDefinitionListsHoldOnlyTermsAndDefinitions(t *testing.T) {
	for _, awarded := range []bool{false, true} {
		var buf bytes.Buffer
		p := ReceiptPage{OrderID: "0193a0e0-0000-7000-8000-000000000000", PointsAwarded: awarded, OrderPoints: 3, Balance: 3}
		if err := Receipt(p).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		item := func(s *goquery.Selection) bool {
			_, hasRole := s.Attr("role")
			return (s.Is("dt") || s.Is("dd")) && !hasRole
		}
		if doc.Find("dl").Length() == 0 {
			t.Fatalf("points awarded %v: got no <dl>", awarded)
		}
		doc.Find("dl").Children().Each(func(_ int, c *goquery.Selection) {
			ok := item(c)
			if c.Is("div") {
				ok = c.Children().Length() > 0
				c.Children().Each(func(_ int, g *goquery.Selection) { ok = ok && item(g) })
			}
			if !ok {
				h, _ := goquery.OuterHtml(c)
				t.Errorf("points awarded %v: got %s in a <dl>, want only dt/dd (without a role) or a div of them", awarded, h)
			}
		})
		if doc.Find(`[data-testid=order-points]`).Length() != 1 {
			t.Errorf("points awarded %v: got %d order-points, want 1", awarded, doc.Find(`[data-testid=order-points]`).Length())
		}
	}
}
