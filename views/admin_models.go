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
