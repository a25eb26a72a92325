package mail

import (
	"testing"

	"github.com/google/uuid"
)

// The caught-mail page finds a confirmation's order and customer by
// reading back what MessageID and recipient wrote: if either format
// changes, this fails instead of the page losing its links.
func TestAddressesReadBack(t *testing.T) {
	order, customer := uuid.New(), uuid.New()
	if got, ok := OrderOfMessageID("<" + MessageID("shop.example", order) + ">"); !ok || got != order {
		t.Errorf("OrderOfMessageID: got %v %v, want %v", got, ok, order)
	}
	if got, ok := CustomerOfAddress(recipient("shop.example", customer)); !ok || got != customer {
		t.Errorf("CustomerOfAddress: got %v %v, want %v", got, ok, customer)
	}
	for _, other := range []string{"", "<abc@example.com>", "order-placed.not-a-uuid@x", "order-placed." + order.String()} {
		if _, ok := OrderOfMessageID(other); ok {
			t.Errorf("OrderOfMessageID(%q): got ok, want false", other)
		}
	}
	if _, ok := CustomerOfAddress("ada@example.com"); ok {
		t.Error("CustomerOfAddress(ada@example.com): got ok, want false")
	}
}
