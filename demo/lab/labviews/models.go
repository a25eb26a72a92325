package labviews

// LabPage is /lab, the double-click lab.
type LabPage struct {
	CSRF  string
	Cards []LabCard
	// Notice is a message above the cards, such as a refused run.
	Notice    string
	Inspector LabInspector
	Faults    LabFaults
	// Present is presenter mode (/lab?present=1): one card at a time, in
	// large type, for a room. Current is the index in Cards of the card
	// shown; PresentURL is presenter mode's address without a card.
	Present    bool
	Current    int
	PresentURL string
}

// LabCard is one scenario.
type LabCard struct {
	Number int
	ID     string
	Title  string
	// Point is the scenario's one-line headline; Explanation the
	// paragraph folded under it.
	Point       string
	Setup       string
	Explanation string
	// CannotRun says why the scenario cannot run on this server's
	// configuration; its Run button is then disabled.
	CannotRun string
	// PresentURL shows this card in presenter mode.
	PresentURL string
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
	Charges int64
	Orders  int64
	// Facts are the run's headlines beyond the counts ("recovered by").
	Facts      []LabFact
	AsExpected bool
	// Summary reads "10 attempts → 1 charge, 1 order".
	Summary string
	// Shoppers are the run's shoppers (two in the last-mug run), each
	// labelled and linked to the inspector.
	Shoppers []LabShopper
	Duration string
	Attempts []LabAttempt
	// Lanes group Attempts when the run tells two stories; otherwise one
	// lane with no name holds them all.
	Lanes []LabLane
	// Axis are the ticks of the timeline's time axis.
	Axis []LabTick
	// Marks are the run's instants on the same axis; Legend says what the
	// timeline's colours, badges and marks mean.
	Marks  []LabMark
	Legend []LabLegendItem
	Notes  []string
	Error  string
}

// LabShopper is a run's shopper as its result names it.
type LabShopper struct {
	// Short is the part of its id that differs from run to run; ID is the
	// whole id.
	Short string
	ID    string
	// InspectURL shows the shopper in the inspector.
	InspectURL string
}

// LabFact is one headline of a run beyond its counts.
type LabFact struct {
	Label string
	Value string
}

// LabLane is a group of a run's attempts: whose story they tell.
type LabLane struct {
	Name     string
	Attempts []LabAttempt
}

// LabTick is a tick of a timeline's time axis. At is its place, in
// quarters of the axis (0 to 4): CSS places it, since the CSP forbids
// inline styles.
type LabTick struct {
	At    int
	Label string
}

// LabMark is an instant of a run on its timeline: a line across the bars
// at X (thousandths of the axis, as BarX) and its label over the axis, at
// Percent of the column's width (SVG geometry, not a style), drawn to the
// right of the line (Anchor start) or, past the middle, to its left (end).
type LabMark struct {
	Label   string
	At      string
	X       int
	Percent string
	Anchor  string
}

// LabLegendItem is one entry of a timeline's legend: a sample (a coloured
// swatch, or a badge reading Sample) drawn with Class, and what it means.
type LabLegendItem struct {
	Class   string
	Sample  string
	Meaning string
}

// LabAttempt is one row of a run's timeline.
type LabAttempt struct {
	// N numbers the attempt within its lane, or within the run when it
	// has one lane.
	N     int
	Label string
	Key   string
	// Short is the part of Key that tells it from the run's other keys.
	Short string
	Start string
	End   string
	// Took is how long the attempt took to be answered.
	Took string
	// Waited is an attempt that was told to wait and asked again until it
	// had the answer, as the checkout page does.
	Waited bool
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
	// Marks are the run's marks, drawn across the attempt's bar.
	Marks []LabMark
}

// LabInspector is the database's view of a lab shopper.
type LabInspector struct {
	// Customer is empty before any run.
	Customer string
	Shopper  string
	Scenario string
	Running  bool
	Keys     []LabKey
	// Key is the key whose audit trail Events is; KeyShort its short form.
	Key      string
	KeyShort string
	Events   []LabEvent
	// PollURL is what the page script fetches to refresh the inspector.
	PollURL string
	// TracesURL is the selected key's traces on the admin listener; empty
	// when there is none to link to.
	TracesURL string
}

// LabKey is one order key (a row of the kit's idem_keys).
type LabKey struct {
	Key      string
	Short    string
	Status   string
	Lock     string
	Token    string
	Response string
	// Finished is a key with its answer stored: it holds no lock, so Lock
	// is not shown for it.
	Finished bool
	Selected bool
	URL      string
}

// LabEvent is one entry of a key's audit trail: Event is its name
// (claimed, taken_over), Words the same for people, and Detail its
// detail in words, not its JSON.
type LabEvent struct {
	At     string
	Event  string
	Words  string
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
