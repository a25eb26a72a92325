package problem

import "net/http"

// The problems the API can answer with. Kinds lists them for /problems/{slug}.
var (
	InvalidRequest = Kind{"invalid-request", "Invalid request", http.StatusBadRequest,
		"The body or a parameter is malformed or names something that does not exist. Nothing was stored: fix the request and send it again, with the same Idempotency-Key if you like."}
	MissingKey = Kind{"missing-idempotency-key", "Idempotency-Key required", http.StatusBadRequest,
		`This operation charges money, so it must carry an Idempotency-Key header: a string of 1 to 255 printable ASCII characters, preferably a UUID, generated once per operation and reused on every retry. Example: Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324".`}
	InvalidKey = Kind{"invalid-idempotency-key", "Invalid Idempotency-Key", http.StatusBadRequest,
		"The Idempotency-Key header must be one Structured Field string (or the bare key) of 1 to 255 printable ASCII characters."}
	Unauthorized = Kind{"unauthorized", "Authentication required", http.StatusUnauthorized,
		"Send the token from POST /api/customers as Authorization: Bearer <token>."}
	PaymentDeclined = Kind{"payment-declined", "Payment declined", http.StatusPaymentRequired,
		"The payment provider declined the card. This outcome is final for this Idempotency-Key and is replayed on retries; to try again, start a new operation with a new key."}
	NotFound = Kind{"not-found", "Not found", http.StatusNotFound,
		"There is no such resource, or it belongs to another customer."}
	MethodNotAllowed = Kind{"method-not-allowed", "Method not allowed", http.StatusMethodNotAllowed,
		"This resource does not support the request's method."}
	KeyInUse = Kind{"request-in-progress", "Request in progress", http.StatusConflict,
		"Another request with this Idempotency-Key is still being processed. Retry after the number of seconds in Retry-After: you will get its stored result."}
	LockLost = Kind{"request-superseded", "Request superseded", http.StatusConflict,
		"This attempt took too long and a retry with the same Idempotency-Key took the operation over. Nothing was written by this attempt; retry to receive the result of the one that finished."}
	KeyReused = Kind{"idempotency-key-reused", "Idempotency-Key reused", http.StatusUnprocessableEntity,
		"This Idempotency-Key was already used for a different request. A key identifies one operation: generate a new key for a new operation."}
	UnsupportedMediaType = Kind{"unsupported-media-type", "Unsupported media type", http.StatusUnsupportedMediaType,
		"Send the body as application/json."}
	PaymentNotCompleted = Kind{"payment-not-completed", "Payment not completed", http.StatusPaymentRequired,
		"The request that started this payment was interrupted (the server stopped, or the payment provider failed) before anything was charged, and no retry came back within the grace period, so the server closed the operation: nothing was charged, and nothing will be under this Idempotency-Key. This outcome is final for the key and is replayed on retries; to try again, start a new operation with a new key."}
	ProviderFailed = Kind{"provider-failed", "Payment provider error", http.StatusBadGateway,
		"The payment provider failed and the outcome of the payment is not known yet. Nothing was stored; retry with the same Idempotency-Key after Retry-After seconds and the operation resumes without charging twice. If no retry comes, the server settles the key itself: the order is completed if the payment went through, otherwise the key answers payment-not-completed."}
	ProviderUnavailable = Kind{"provider-unavailable", "Payment provider unavailable", http.StatusServiceUnavailable,
		"The payment provider could not be reached. Retry with the same Idempotency-Key after Retry-After seconds."}
	ProviderTimeout = Kind{"provider-timeout", "Payment provider timeout", http.StatusGatewayTimeout,
		"The payment provider did not answer in time; the payment may or may not have happened. Retry with the same Idempotency-Key after Retry-After seconds and the operation resumes without charging twice. If no retry comes, the server settles the key itself: the order is completed if the payment went through, otherwise the key answers payment-not-completed."}
	ShuttingDown = Kind{"shutting-down", "Server shutting down", http.StatusServiceUnavailable,
		"The server stopped while processing this request, before it finished. Nothing was stored by this attempt; retry with the same Idempotency-Key after Retry-After seconds and the operation resumes without charging twice."}
	MisdirectedRequest = Kind{"misdirected-request", "Misdirected request", http.StatusMisdirectedRequest,
		"This server does not answer for the host name the request was sent to. It answers only for the names it is configured with (ALLOWED_HOSTS), so that a page that rebinds its own domain name to this server's address cannot use it."}
	TooManyRequests = Kind{"too-many-requests", "Too many requests", http.StatusTooManyRequests,
		"Too many requests of this kind came from your address, or for this Idempotency-Key, in a short time. Nothing was stored; retry after the number of seconds in Retry-After."}
	CartOrdered = Kind{"cart-ordered", "Cart already ordered", http.StatusConflict,
		"This cart has been ordered (under another Idempotency-Key, or none) and is closed: it cannot be changed or ordered again. GET the cart for its order_id; put what you want next in a new cart."}
	CartChanged = Kind{"cart-changed", "Cart changed", http.StatusConflict,
		"The cart changed while this order was being placed (another request set its lines), or its current version is being ordered under another Idempotency-Key. Nothing was stored or charged: GET the cart, check it, and order again."}
	CartVersionMismatch = Kind{"cart-version-mismatch", "Cart version mismatch", http.StatusPreconditionFailed,
		"The If-Match header names a version of the cart that is not its current one. Nothing was stored or charged: GET the cart for its current version, check it, and order again."}
	Unavailable = Kind{"service-unavailable", "Service unavailable", http.StatusServiceUnavailable,
		"The shop's database cannot be reached for a moment (it is restarting, or the network to it failed). Retry after Retry-After seconds, with the same Idempotency-Key for an order: if this attempt got as far as the payment, the retry resumes it without charging twice."}
	Internal = Kind{"internal", "Internal error", http.StatusInternalServerError,
		"Something went wrong on our side. It has been logged. Retrying with the same Idempotency-Key is safe."}
)

// Kinds lists every kind, for the documentation route.
var Kinds = []Kind{
	InvalidRequest, MissingKey, InvalidKey, Unauthorized, PaymentDeclined, NotFound, MethodNotAllowed,
	KeyInUse, LockLost, KeyReused, UnsupportedMediaType, ProviderFailed, ProviderUnavailable, ProviderTimeout, Internal,
	PaymentNotCompleted, ShuttingDown, Unavailable, MisdirectedRequest, TooManyRequests,
	CartOrdered, CartChanged, CartVersionMismatch,
}
