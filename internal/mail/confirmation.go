package mail

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	gomail "github.com/wneessen/go-mail"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/db"
	"exactlyonce/views"
)

// MessageID is the confirmation's Message-ID (without the angle brackets)
// for the order placed event of orderID: the same for every send of it, so
// that a copy sent again after a crash is recognisably the same message.
func MessageID(domain string, orderID uuid.UUID) string {
	return fmt.Sprintf("order-placed.%s@%s", orderID, domain)
}

// recipient is a demo customer's address: customers have no address yet.
func recipient(domain string, customer uuid.UUID) string {
	return fmt.Sprintf("customer-%s@%s", customer, domain)
}

// confirmation composes the order's confirmation mail.
func confirmation(cfg Config, order db.OrderForMailRow) (*gomail.Msg, error) {
	var lines []catalog.Line
	if err := json.Unmarshal(order.Items, &lines); err != nil {
		return nil, fmt.Errorf("order items: %w", err)
	}
	m := gomail.NewMsg()
	if err := m.From(cfg.From); err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	if err := m.To(recipient(cfg.Domain, order.CustomerID)); err != nil {
		return nil, fmt.Errorf("to: %w", err)
	}
	m.SetMessageIDWithValue(MessageID(cfg.Domain, order.ID))
	m.SetDateWithValue(order.CreatedAt)
	m.Subject("Your order " + order.ID.String())
	var b strings.Builder
	fmt.Fprintf(&b, "Thank you for your order %s.\n\n", order.ID)
	for _, l := range lines {
		fmt.Fprintf(&b, "%d × %s\n", l.Quantity, l.Name)
	}
	fmt.Fprintf(&b, "\nTotal: %s\n", views.FormatMoney(order.Amount, order.Currency))
	m.SetBodyString(gomail.TypeTextPlain, b.String())
	return m, nil
}
