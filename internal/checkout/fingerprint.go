package checkout

import "exactlyonce/idem"

// Fingerprint identifies an order request for the "same key, different
// request" check, by the kit's one rule (idem.Fingerprint): the method, the
// route and the body in canonical form. The caller passes the body canonical
// already (object members sorted, no insignificant whitespace, as
// idem.NormalizeJSON makes it, or as encoding/json writes a struct whose
// fields are in name order), and with a card cut to its last four digits:
// the fingerprint is stored, and a hash of a whole card number can be
// reversed by trying the few digits an attacker does not know.
func Fingerprint(method, route string, canonical []byte) []byte {
	return idem.Fingerprint([]byte(method), []byte(route), canonical)
}
