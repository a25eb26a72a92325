package problem

import (
	"net/http"

	"exactlyonce/idem"
)

// The table: every error code the shop answers with, for the API (type,
// title, status, About) and for a page (Page). A row for one of the kit's
// refusals is made by kitKind: its type, title and status are the kit's
// (idem.RefusalOf), and the shop adds only its words. web.Classify maps
// each error onto one of these once; the JSON writer and the page writer
// only read the row. Kinds lists the rows the API answers with, for
// /problems/{slug} and api/openapi.json.
var (
	InvalidRequest = Kind{Slug: "invalid-request", Title: "Invalid request", Status: http.StatusBadRequest,
		About: "The body or a parameter is malformed or names something that does not exist. Nothing was stored: fix the request and send it again, with the same Idempotency-Key if you like.",
		Page: Page{Heading: "This request cannot be carried out",
			Message: "The form asked for something the shop cannot sell or reserve, so nothing was charged or reserved.", Next: ToShop}}
	MissingKey = kitKind(idem.ErrMissingKey,
		`This operation charges money, so it must carry an Idempotency-Key header: a string of 1 to 255 printable ASCII characters, preferably a UUID, generated once per operation and reused on every retry. Example: Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324".`,
		Page{Heading: "This form cannot be used",
			Message: "This form arrived without its key, so it was refused and nothing was charged. Open the form again.", Next: ToShop})
	InvalidKey = kitKind(idem.ErrBadKey,
		"The Idempotency-Key header must be one Structured Field string (or the bare key) of 1 to 255 printable ASCII characters.",
		Page{Heading: "This form cannot be used",
			Message: "This form arrived with a key the shop cannot read, so it was refused and nothing was charged. Open the form again.", Next: ToShop})
	Unauthorized = Kind{Slug: "unauthorized", Title: "Authentication required", Status: http.StatusUnauthorized,
		About: "Send the token from POST /api/customers as Authorization: Bearer <token>.",
		Page: Page{Heading: "Not signed in",
			Message: "This address belongs to the shop's API, which needs a token; the shop's pages need none.", Next: ToShop}}
	PaymentDeclined = Kind{Slug: "payment-declined", Title: "Payment declined", Status: http.StatusPaymentRequired,
		About: "The payment provider declined the card. This outcome is final for this Idempotency-Key and is replayed on retries; to try again, start a new operation with a new key.",
		Page: Page{Heading: "Payment declined",
			Message: "Your card was declined and nothing was charged. Start a new checkout to try again.", Next: ToCheckout}}
	NotFound = Kind{Slug: "not-found", Title: "Not found", Status: http.StatusNotFound,
		About: "There is no such resource, or it belongs to another customer.",
		Page: Page{Heading: "Not found",
			Message: "There is no such page, or it is not yours.", Next: ToShop}}
	MethodNotAllowed = Kind{Slug: "method-not-allowed", Title: "Method not allowed", Status: http.StatusMethodNotAllowed,
		About: "This resource does not support the request's method.",
		Page: Page{Heading: "Not allowed",
			Message: "This page cannot be used that way.", Next: ToShop}}
	KeyInUse = kitKind(idem.ErrInProgress,
		"Another request with this Idempotency-Key is still being processed. Retry after the number of seconds in Retry-After: you will get its stored result.",
		Page{Heading: "Still working on it",
			Message: "This form was already sent and the shop is still working on it. Send it again in a few seconds: it can never charge you twice.", Next: ToShop})
	LockLost = kitKind(idem.ErrLockLost,
		"This attempt took too long and a retry with the same Idempotency-Key took the operation over. Nothing was written by this attempt; retry to receive the result of the one that finished.",
		Page{Heading: "Taken over by a newer try",
			Message: "This attempt took too long and a newer sending of the same form took it over. Send the form again to see how it ended: it can never charge you twice.", Next: ToShop})
	KeyReused = kitKind(idem.ErrMismatch,
		"This Idempotency-Key was already used for a different request. A key identifies one operation: generate a new key for a new operation.",
		Page{Heading: "This form was changed",
			Message: "This form was already sent with other contents than it now carries, so it was refused and nothing more was charged or reserved. Open the form again to start anew.", Next: ToShop})
	UnsupportedMediaType = Kind{Slug: "unsupported-media-type", Title: "Unsupported media type", Status: http.StatusUnsupportedMediaType,
		About: "Send the body as application/json.",
		Page: Page{Heading: "Form not understood",
			Message: "The form arrived in a format the shop does not read. Nothing was changed.", Next: ToShop}}
	PaymentNotCompleted = Kind{Slug: "payment-not-completed", Title: "Payment not completed", Status: http.StatusPaymentRequired,
		About: "Nothing was charged, and nothing will be under this Idempotency-Key. Either the request that started this payment was interrupted (the server stopped, or the payment provider failed) before anything was charged, and no retry came back within the grace period, so the server closed the operation; or the card's bank asked the cardholder to authenticate the payment (3-D Secure) and either the request named no return_url to send them to, or they did not complete it within the authentication window, so the payment was canceled at the provider (charge_id names it); or the provider charged another amount than the order's, and that charge is refunded in full (charge_id names it). This outcome is final for the key and is replayed on retries; to try again, start a new operation with a new key (for 3-D Secure, with a return_url).",
		Page: Page{Heading: "Payment not completed",
			Message: "Your payment did not go through and nothing was charged (it was interrupted, or your bank's check was not completed in time), and nothing will be charged for this form. Start a new checkout to try again.", Next: ToCheckout}}
	// OutcomeUnknown is the payment whose outcome nobody knows yet: the
	// provider failed after the request may have reached it. Its slug
	// predates the name and stays, as clients branch on it.
	OutcomeUnknown = Kind{Slug: "provider-failed", Title: "Payment outcome unknown", Status: http.StatusBadGateway,
		About: "The payment provider failed and the outcome of the payment is not known yet. Nothing was stored; retry with the same Idempotency-Key after Retry-After seconds and the operation resumes without charging twice. If no retry comes, the server settles the key itself: the order is completed if the payment went through, otherwise the key answers payment-not-completed.",
		Page: Page{Heading: "We do not know yet whether you paid",
			Message: "The payment provider failed before it told us how your payment ended. Send the same form again in a few seconds: it can never charge you twice.", Next: ToShop}}
	ProviderUnavailable = Kind{Slug: "provider-unavailable", Title: "Payment provider unavailable", Status: http.StatusServiceUnavailable,
		About: "The payment provider could not be reached. Retry with the same Idempotency-Key after Retry-After seconds.",
		Page: Page{Heading: "Payments are unavailable",
			Message: "The payment provider cannot be reached right now, and nothing was charged. Send the same form again in a few seconds.", Next: ToShop}}
	ProviderTimeout = Kind{Slug: "provider-timeout", Title: "Payment provider timeout", Status: http.StatusGatewayTimeout,
		About: "The payment provider did not answer in time; the payment may or may not have happened. Retry with the same Idempotency-Key after Retry-After seconds and the operation resumes without charging twice. If no retry comes, the server settles the key itself: the order is completed if the payment went through, otherwise the key answers payment-not-completed.",
		Page: Page{Heading: "We do not know yet whether you paid",
			Message: "The payment provider did not answer in time. Send the same form again in a few seconds: it can never charge you twice.", Next: ToShop}}
	ShuttingDown = Kind{Slug: "shutting-down", Title: "Server shutting down", Status: http.StatusServiceUnavailable,
		About: "The server stopped while processing this request, before it finished. Nothing was stored by this attempt; retry with the same Idempotency-Key after Retry-After seconds and the operation resumes without charging twice.",
		Page: Page{Heading: "Back in a moment",
			Message: "The shop restarted while it worked on your request. Send the same form again in a few seconds: it can never charge you twice.", Next: ToShop}}
	MisdirectedRequest = Kind{Slug: "misdirected-request", Title: "Misdirected request", Status: http.StatusMisdirectedRequest,
		About: "This server does not answer for the host name the request was sent to. It answers only for the names it is configured with (ALLOWED_HOSTS), so that a page that rebinds its own domain name to this server's address cannot use it.",
		Page: Page{Heading: "Wrong address",
			Message: "The shop does not answer under the name this page was opened with.", Next: ToShop}}
	TooManyRequests = Kind{Slug: "too-many-requests", Title: "Too many requests", Status: http.StatusTooManyRequests,
		About: "Too many requests of this kind came from your address, or for this Idempotency-Key, in a short time. Nothing was stored; retry after the number of seconds in Retry-After.",
		Page: Page{Heading: "Too many requests",
			Message: "Too many requests came from you, or from your address, in a short time. Nothing was changed; try again in a few seconds.", Next: ToShop}}
	RequestTimeout = kitKind(idem.ErrIncompleteBody,
		"The request's body did not arrive whole in time (the connection was too slow, or the client stopped sending). Nothing was read or stored: send the request again, with the same Idempotency-Key.",
		Page{Heading: "The form did not arrive",
			Message: "Your browser stopped sending the form before it arrived whole, so nothing was changed or charged. Send it again.", Next: ToShop})
	CartOrdered = Kind{Slug: "cart-ordered", Title: "Cart already ordered", Status: http.StatusConflict,
		About: "This cart has been ordered (under another Idempotency-Key, or none) and is closed: it cannot be changed or ordered again. GET the cart for its order_id; put what you want next in a new cart.",
		Page: Page{Heading: "Cart already ordered",
			Message: "This cart has been ordered and cannot be changed or ordered again. What you add next goes into a new cart.", Next: ToShop}}
	CartChanged = Kind{Slug: "cart-changed", Title: "Cart changed", Status: http.StatusConflict,
		About: "The cart changed while this order was being placed (another request set its lines), or its current version is being ordered under another Idempotency-Key. Nothing was stored or charged: GET the cart, check it, and order again.",
		Page: Page{Heading: "Your cart changed",
			Message: "Your cart changed while this order was being placed, so nothing was charged. Check it and order again.", Next: ToCart}}
	CartVersionMismatch = Kind{Slug: "cart-version-mismatch", Title: "Cart version mismatch", Status: http.StatusPreconditionFailed,
		About: "The If-Match header names a version of the cart that is not its current one. Nothing was stored or charged: GET the cart for its current version, check it, and order again.",
		Page: Page{Heading: "Your cart changed",
			Message: "Your cart changed since this page was opened, so nothing was charged. Check it and order again.", Next: ToCart}}
	SoldOut = Kind{Slug: "sold-out", Title: "Sold out", Status: http.StatusConflict,
		About: "The order asks for more of a product than is left. Nothing was stored, reserved or charged, and no payment was started; errors names each product that is short and how many are left. Order what is left (a new Idempotency-Key, or the same one for the same request once stock came back).",
		Page: Page{Heading: "Sold out",
			Message: "Someone bought the last of something in your cart before you paid, so nothing was charged. Change your cart and pay again.", Next: ToCart}}
	OrderCancelled = Kind{Slug: "order-cancelled", Title: "Order cancelled", Status: http.StatusConflict,
		About: "The order is cancelled already (by another request, under another Idempotency-Key), and refunded in full: nothing more was refunded. GET the order's refunds to see the cancel.",
		Page: Page{Heading: "Order already cancelled",
			Message: "This order is cancelled already and its money is on its way back to you: nothing more was refunded.", Next: ToOrders}}
	CancelWindowClosed = Kind{Slug: "cancel-window-closed", Title: "Too late to cancel", Status: http.StatusConflict,
		About: "Orders can be cancelled only within a window after they are placed (the detail says how long). Nothing was stored or refunded.",
		Page: Page{Heading: "Too late to cancel",
			Message: "This order can no longer be cancelled, so nothing was refunded. Write to us if something is wrong with it.", Next: ToOrders}}
	RefundExceeds = Kind{Slug: "refund-exceeds-charge", Title: "Refund exceeds what is left", Status: http.StatusConflict,
		About: "The refund asks for more than is left to refund of the order (its amount less every refund made or under way), or nothing is left. Nothing was stored or refunded; left names what is left, in minor units.",
		Page: Page{Heading: "Nothing left to refund",
			Message: "This order has been refunded in full already, so nothing more was refunded.", Next: ToOrders}}
	RefundRefused = Kind{Slug: "refund-refused", Title: "Refund refused", Status: http.StatusConflict,
		About: "The payment provider refused the refund for good (the charge was refunded by other means, or disputed). This outcome is final for this Idempotency-Key and is replayed on retries; nothing was refunded by it.",
		Page: Page{Heading: "The refund was refused",
			Message: "The payment provider refused this refund, so nothing was refunded by it. Write to us and we will put it right.", Next: ToOrders}}
	RefundPending = Kind{Slug: "refund-pending", Title: "Refund outcome unknown", Status: http.StatusServiceUnavailable,
		About: "The payment provider did not confirm the refund in time; it may or may not have been made. Retry with the same Idempotency-Key after Retry-After seconds: the refund resumes and is made at most once. If no retry comes, the server completes it itself.",
		Page: Page{Heading: "Your refund is on its way",
			Message: "The payment provider has not confirmed your refund yet. Send the same form again in a few seconds: it can never refund twice.", Next: ToOrders}}
	Unavailable = kitKind(idem.ErrUnavailable,
		"The shop's database cannot be reached for a moment (it is restarting, or the network to it failed). Retry after Retry-After seconds, with the same Idempotency-Key for an order: if this attempt got as far as the payment, the retry resumes it without charging twice.",
		Page{Heading: "Back in a moment",
			Message: "The shop cannot reach its records right now. Please try again in a few seconds. If you were paying, sending the same form again is safe: it can never charge you twice.", Next: ToShop})
	Internal = Kind{Slug: "internal", Title: "Internal error", Status: http.StatusInternalServerError,
		About: "Something went wrong on our side. It has been logged. Retrying with the same Idempotency-Key is safe.",
		Page: Page{Heading: "Something went wrong",
			Message: "Something went wrong on our side and it has been logged. If you were paying, sending the same form again is safe: it can never charge you twice.", Next: ToShop}}
)

// Rows no API route answers with: they are met only by a page's form, so
// they are neither in Kinds nor in api/openapi.json.
var (
	// PriceChanged is a new order sent with an expected amount that is not
	// what it costs now; only the checkout form sends one.
	PriceChanged = Kind{Slug: "price-changed", Title: "Price changed", Status: http.StatusConflict,
		About: "The amount the order was sent with is not what it costs now. Nothing was stored or charged.",
		Page: Page{Heading: "Prices have changed",
			Message: "The total of your order is not the one this form showed, so nothing was charged. Check the new total and pay again.", Next: ToCheckout}}
	// FormRefused is a form key the kit's forms refuse: missing, minted for
	// another visitor or form, or expired.
	FormRefused = kitKind(idem.ErrFormKeyMissing,
		"The form's key is missing, was minted for another visitor or form, or has expired. Nothing was stored.",
		Page{Heading: "This form cannot be used",
			Message: "This form is too old, was changed, or was made for another browser, so it was refused and nothing was reserved. Open the form again.", Next: ToPickup})
	// CancelFormRefused is FormRefused for an order's cancel form: the same
	// problem type, and a page that leads back to the orders, not to the
	// pickup form.
	CancelFormRefused = kitKind(idem.ErrFormKeyMissing,
		"The cancel form's key is missing, was minted for another shopper or order, or has expired. Nothing was stored or refunded.",
		Page{Heading: "This form cannot be used",
			Message: "This cancel form is too old, was made for another order, or for another browser, so nothing was cancelled or refunded. Open the order's page again.", Next: ToOrders})
)

// Kinds lists every kind the API answers with, for the documentation route.
var Kinds = []Kind{
	InvalidRequest, MissingKey, InvalidKey, Unauthorized, PaymentDeclined, NotFound, MethodNotAllowed,
	KeyInUse, LockLost, KeyReused, UnsupportedMediaType, OutcomeUnknown, ProviderUnavailable, ProviderTimeout, Internal,
	PaymentNotCompleted, ShuttingDown, Unavailable, MisdirectedRequest, TooManyRequests, RequestTimeout,
	CartOrdered, CartChanged, CartVersionMismatch, SoldOut,
	OrderCancelled, CancelWindowClosed, RefundExceeds, RefundRefused, RefundPending,
}
