package problem

// Retry is what a client may do after a problem, as /problems/{slug}
// tells it.
type Retry int

const (
	// RetrySameKey: send the same request again with the same
	// Idempotency-Key (after Retry-After when the answer carries one).
	// Never a new key: the first attempt may have charged, and a new key
	// is a new operation that would charge again.
	RetrySameKey Retry = iota + 1
	// RetryFixed: nothing was stored; change what the detail names and
	// send again. The same key may be kept, as it was not used up.
	RetryFixed
	// RetryNewKey: the outcome is final for this key and every retry
	// with it replays it; another attempt is a new operation with a new
	// key.
	RetryNewKey
	// RetryNot: sending the same request again gets the same answer.
	RetryNot
)

// String is how a problem page words the retry rule.
func (r Retry) String() string {
	switch r {
	case RetrySameKey:
		return "Retry with the same Idempotency-Key, never a new one."
	case RetryFixed:
		return "Fix the request, then send it again; the same Idempotency-Key may be kept, since nothing was stored under it."
	case RetryNewKey:
		return "Do not retry with this Idempotency-Key (a retry replays this answer); a new attempt needs a new key."
	case RetryNot:
		return "Do not retry as is: the same request gets the same answer."
	}
	return ""
}

// Advice is what a client should do after a problem of a kind.
type Advice struct {
	Retry Retry
	// RetryAfter says the answer carries a Retry-After header, the
	// seconds to wait before the retry.
	RetryAfter bool
	// Do is the next step, in a sentence or two.
	Do string
}

// advice holds each API kind's advice, by slug; TestEveryKindHasAdvice
// keeps it complete.
var advice = map[string]Advice{
	InvalidRequest.Slug:       {RetryFixed, false, "Read the detail, fix the body or parameter it names, and send the request again."},
	MissingKey.Slug:           {RetryFixed, false, "Generate one key for the operation (a UUID), send it in Idempotency-Key, and reuse it on every retry of that operation."},
	InvalidKey.Slug:           {RetryFixed, false, "Send the key as one Structured Field string of 1 to 255 printable ASCII characters, such as \"8e03978e-40d5-43e8-bc93-6894a57f9324\"."},
	Unauthorized.Slug:         {RetryFixed, false, "Get a token from POST /api/customers and send it as Authorization: Bearer <token>."},
	PaymentDeclined.Slug:      {RetryNewKey, false, "Tell the customer the card was declined; to pay with another card, start a new operation under a new key."},
	NotFound.Slug:             {RetryNot, false, "Check the path and the id: a resource of another customer is not found either."},
	MethodNotAllowed.Slug:     {RetryNot, false, "Use a method the resource supports (see api/openapi.json)."},
	KeyInUse.Slug:             {RetrySameKey, true, "Wait the seconds in Retry-After and send the same request again: you get the stored result of the request still running."},
	LockLost.Slug:             {RetrySameKey, true, "Send the same request again after Retry-After to receive the result of the attempt that finished."},
	KeyReused.Slug:            {RetryNot, false, "If this is a new operation, generate a new key for it; if it is a retry, send exactly the body first sent with this key."},
	UnsupportedMediaType.Slug: {RetryFixed, false, "Send the body with Content-Type: application/json."},
	OutcomeUnknown.Slug:       {RetrySameKey, true, "Wait the seconds in Retry-After and retry with the same key: the operation resumes and charges at most once. A new key could charge twice."},
	ProviderUnavailable.Slug:  {RetrySameKey, true, "Wait the seconds in Retry-After and retry with the same key."},
	ProviderTimeout.Slug:      {RetrySameKey, true, "Wait the seconds in Retry-After and retry with the same key: the operation resumes and charges at most once. A new key could charge twice."},
	Internal.Slug:             {RetrySameKey, false, "Retry with the same key after a short backoff (it answers with no Retry-After); report it if it persists."},
	PaymentNotCompleted.Slug:  {RetryNewKey, false, "Nothing was charged and nothing will be under this key; to try again, start a new operation under a new key."},
	ShuttingDown.Slug:         {RetrySameKey, true, "Wait the seconds in Retry-After and retry with the same key, on this instance or another."},
	Unavailable.Slug:          {RetrySameKey, true, "Wait the seconds in Retry-After and retry with the same key."},
	MisdirectedRequest.Slug:   {RetryNot, false, "Send the request to a host name the server is configured for (ALLOWED_HOSTS)."},
	TooManyRequests.Slug:      {RetrySameKey, true, "Wait the seconds in Retry-After, then send the request again; nothing was stored."},
	RequestTimeout.Slug:       {RetrySameKey, false, "Send the request again, whole, with the same key; nothing was read."},
	CartOrdered.Slug:          {RetryNot, false, "GET the cart for its order_id; put what comes next in a new cart."},
	CartChanged.Slug:          {RetryFixed, false, "GET the cart, check its lines, and order it again."},
	CartVersionMismatch.Slug:  {RetryFixed, false, "GET the cart for its current version (its ETag), check it, and order it again with that If-Match."},
	SoldOut.Slug:              {RetryFixed, false, "Tell the customer what is short (errors names each product and how many are left); order what is left, or the same order again once stock came in."},
	OrderCancelled.Slug:       {RetryNot, false, "The order is cancelled and refunded in full; GET its refunds to show the customer."},
	CancelWindowClosed.Slug:   {RetryNot, false, "The order can no longer be cancelled by its customer; an operator may still refund it."},
	RefundExceeds.Slug:        {RetryFixed, false, "Ask for at most left (minor units), under the same key or a new one; nothing was stored."},
	RefundRefused.Slug:        {RetryNot, false, "Final for this key: the provider refused the refund. Look at the order's charge at the provider before anything else."},
	RefundPending.Slug:        {RetrySameKey, true, "Wait the seconds in Retry-After and retry with the same key: the refund resumes and is made at most once. A new key could refund twice."},
}

// Advice is what a client should do after a problem of this kind; false
// for a kind the API never answers with.
func (k Kind) Advice() (Advice, bool) {
	a, ok := advice[k.Slug]
	return a, ok
}
