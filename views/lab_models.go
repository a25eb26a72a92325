package views

// LabPage is /lab, the double-click lab.
type LabPage struct {
	CSRF  string
	Cards []LabCard
	// Notice is a message above the cards, such as a refused run.
	Notice    string
	Inspector LabInspector
	Faults    LabFaults
}

// LabCard is one scenario.
type LabCard struct {
	Number      int
	ID          string
	Title       string
	Setup       string
	Explanation string
	// Expect is what a correct server ends with: "1 charge · 1 order".
	Expect string
	CSRF   string
	Result LabResult
}

// LabResult is the outcome of a card's last run, or of the run in flight.
type LabResult struct {
	ScenarioID string
	// Ran is false until the scenario has been run.
	Ran     bool
	Running bool
	// Charges and Orders are counted in the database for the run's shopper.
	Charges    int64
	Orders     int64
	AsExpected bool
	// Summary reads "10 attempts → 1 charge, 1 order".
	Summary  string
	Shopper  string
	Duration string
	Attempts []LabAttempt
	Notes    []string
	Error    string
	// InspectURL shows the run's shopper in the inspector.
	InspectURL string
}

// LabAttempt is one row of a run's timeline.
type LabAttempt struct {
	N     int
	Label string
	Key   string
	Start string
	End   string
	// BarX and BarWidth place the attempt on the run's time axis, in
	// thousandths of the run's length (an SVG viewBox of width 1000: the
	// CSP forbids inline styles, not SVG geometry).
	BarX     int
	BarWidth int
	InFlight bool
	Status   string
	// Tone is ok, wait, refused or fail: the colour of the status.
	Tone       string
	Outcome    string
	Replayed   bool
	RetryAfter string
	Lock       string
}

// LabInspector is the database's view of a lab shopper.
type LabInspector struct {
	// Customer is empty before any run.
	Customer string
	Shopper  string
	Scenario string
	Running  bool
	Keys     []LabKey
	// Key is the key whose audit trail Events is.
	Key    string
	Events []LabEvent
	// PollURL is what the page script fetches to refresh the inspector.
	PollURL string
}

// LabKey is one order key (a row of the kit's idem_keys).
type LabKey struct {
	Key      string
	Short    string
	Status   string
	Lock     string
	Token    string
	Response string
	Selected bool
	URL      string
}

// LabEvent is one entry of a key's audit trail.
type LabEvent struct {
	At     string
	Event  string
	Detail string
}

// LabFaults is the fake provider's fault panel.
type LabFaults struct {
	CSRF    string
	DelayMS int64
	Fail    string
	Options []LabOption
	// SafetyNet is what the background workers caught, server-wide.
	SafetyNet LabSafetyNet
}

// LabSafetyNet counts, for the whole server, the charges the reconciler
// refunded because no order held them, and the poison keys the completer
// parked for an operator.
type LabSafetyNet struct {
	Refunds int64
	Parked  int64
}

// LabOption is one choice of a select.
type LabOption struct {
	Value string
	Label string
}
