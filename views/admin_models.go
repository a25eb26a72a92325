package views

// AdminLink is one entry of the admin index: where it is, on which
// listener, and what it shows. A link to a page that is not served here
// has no Href and says why in About.
type AdminLink struct {
	Title    string
	Href     string
	Listener string
	About    string
}

// AdminIndex is the admin listener's /.
type AdminIndex struct {
	// ShopURL is where the shop's listener is reached (BASE_URL).
	ShopURL string
	Links   []AdminLink
}

// AdminMail is the admin listener's /mail: the demo's caught mail.
type AdminMail struct {
	// SMTPAddr is where the catcher listens.
	SMTPAddr string
	Mails    []CaughtMail
}

// CaughtMail is one caught message and, when it is an order's
// confirmation, the ways to that order.
type CaughtMail struct {
	Subject, From, To, Received, MessageID, Body, Raw string
	// OrderID is the order the mail confirms ("" for other mail), and
	// ReceiptURL and InspectorURL its receipt on the shop and its
	// shopper in the lab's key inspector (empty when the lab is off).
	OrderID, ReceiptURL, InspectorURL string
}

// ProblemDoc is /problems/{slug} for a browser: what the problem means and
// what a client should do about it.
type ProblemDoc struct {
	Slug, Title string
	Status      int
	StatusText  string
	About       string
	// Do is the next step, Retry the rule about the key, and RetryAfter
	// whether the answer carries Retry-After.
	Do, Retry  string
	RetryAfter bool
	// Others are every problem type, for the list at the foot.
	Others []ProblemRef
}

// ProblemRef names a problem type.
type ProblemRef struct {
	Slug, Title string
	Status      int
}

// AdminTraces is the admin listener's /traces: the latest traces kept in
// this process, or those of one idempotency key.
type AdminTraces struct {
	// Off says why no traces are kept; empty when they are.
	Off string
	// Ref is the key asked about (tracing.KeyRef), with Customer and Key
	// when the operator gave those; all empty for the latest traces.
	Ref, Customer, Key string
	// Route keeps the traces whose root span's name holds it (such as
	// "POST /checkout"), FailedOnly those with a failed span.
	Route      string
	FailedOnly bool
	// Hint tells the operator what the query lacks (a key with the
	// customer), or "".
	Hint   string
	Traces []TraceRow
	// Kept says what the store holds against its budget, and how far back
	// it reaches; Reach where older traces are, if anywhere.
	Kept, Reach string
}

// TraceRow is one trace in a list.
type TraceRow struct {
	ID, Href        string
	Root            string
	Start, Duration string
	Spans           int
	Failed          bool
	// Linked is true for a trace listed under a key because it links to one
	// of the key's traces (an outbox job's run).
	Linked bool
}

// AdminTrace is the admin listener's /traces/{id}: one trace, its spans as
// a tree and a waterfall.
type AdminTrace struct {
	ID              string
	Found           bool
	Root            string
	Start, Duration string
	Spans           []SpanRow
	// Dropped counts spans past the store's limit for one trace.
	Dropped int
	// LinkedFrom are later traces that link to this one.
	LinkedFrom []TraceRow
}

// SpanRow is one span of a trace, in tree order.
type SpanRow struct {
	Name, Kind, Scope string
	// Depth is its depth in the tree, 0 for a root; the page indents up to
	// MaxSpanDepth.
	Depth int
	// Offset and Duration are its start after the trace's and its length,
	// in milliseconds; Bar places it on the waterfall, in thousandths of
	// the trace.
	Offset, Duration string
	Bar              SpanBar
	Failed           bool
	Status           string
	Attributes       []SpanAttribute
	Links            []SpanLink
}

// MaxSpanDepth is the deepest indentation the trace page draws.
const MaxSpanDepth = 12

// SpanBar is a span's place on the waterfall, in thousandths of the trace:
// drawn as SVG attributes, which the admin pages' Content-Security-Policy
// allows where inline styles are not.
type SpanBar struct{ X, Width int }

// SpanAttribute is one attribute of a span.
type SpanAttribute struct{ Key, Value string }

// SpanLink is a link from a span to a span of another trace.
type SpanLink struct {
	TraceID, Href string
}

// AdminPayments is the admin listener's /payments: the PaymentIntents the
// shop leaves to an operator.
type AdminPayments struct {
	// Deployment is this database's marker, which the shop writes on every
	// intent it creates (metadata deployment_id).
	Deployment string
	Foreign    []ForeignIntent
	Refused    []RefusedRefund
}

// ForeignIntent is a succeeded intent this database did not make, never
// refunded.
type ForeignIntent struct {
	ID, Amount, Source, Deployment, Customer, Created, FirstSeen string
}

// RefusedRefund is an intent no order holds whose refund the provider
// refused for good.
type RefusedRefund struct {
	ID, Amount, Customer, Key, Reason, At string
}
