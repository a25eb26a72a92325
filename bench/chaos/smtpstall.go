package chaos

import "time"

// stallSMTPOnce is one SMTP stall of the drive, recorded in t. With greet,
// the stalled server still sends its greeting: a sender then waits for the
// answer to its EHLO rather than for the greeting, which some clients time
// differently. The stall is over after SMTPStall even when the drive ends
// meanwhile, as a stall of a shop is.
func (cl *cluster) stallSMTPOnce(greet bool, t *tally, logf func(string, ...any)) {
	logf("SMTP stall for %s (greeting passed: %v)", cl.cfg.SMTPStall, greet)
	began := time.Now()
	cl.smtp.stall(greet)
	t.count(func(d *Disruptions) { d.SMTPStalls++ })
	time.Sleep(cl.cfg.SMTPStall)
	cl.smtp.resume()
	t.span(windowSMTPStall, began)
	logf("SMTP flows again")
}
