package mail

import (
	"strings"

	"github.com/google/uuid"
)

// OrderOfMessageID is the order a confirmation's Message-ID (with or
// without its angle brackets) was made for by MessageID; false for any
// other Message-ID. The demo's caught-mail page links each confirmation
// to its order by it.
func OrderOfMessageID(messageID string) (uuid.UUID, bool) {
	rest, ok := strings.CutPrefix(strings.Trim(messageID, "<>"), "order-placed.")
	if !ok {
		return uuid.Nil, false
	}
	id, _, ok := strings.Cut(rest, "@")
	if !ok {
		return uuid.Nil, false
	}
	order, err := uuid.Parse(id)
	return order, err == nil
}

// CustomerOfAddress is the customer a demo address was made for by
// recipient; false for any other address.
func CustomerOfAddress(address string) (uuid.UUID, bool) {
	rest, ok := strings.CutPrefix(strings.Trim(address, "<>"), "customer-")
	if !ok {
		return uuid.Nil, false
	}
	id, _, ok := strings.Cut(rest, "@")
	if !ok {
		return uuid.Nil, false
	}
	customer, err := uuid.Parse(id)
	return customer, err == nil
}
