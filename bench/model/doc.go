// Package model holds a model of the order protocol in Promela
// (exactlyonce.pml) and the tests that have SPIN check it: claim, lease
// and takeover, the PaymentIntent created with the operation's key, its id
// stored by a fenced statement and the intent confirmed by it (which the
// provider may leave requires_action or processing, and decides a
// processing intent later on its own), the fenced finish, the completer's
// retrieve and cancel by the id (or the create sent again to learn it),
// the reconciler, the sweeper and the remembered answers, and, in a
// configuration of its own, 3-D Secure: the key parked awaiting the
// shopper's authentication, the bank deciding the intent once or never,
// and the shopper's return, the webhook and the completer's window cancel
// racing to settle it (SettleKey), under every
// interleaving within the model's bounds. The tests also check that each mutation of the model (one
// safeguard switched off) breaks the invariant it guards, and that every
// Go function and SQL query docs/model.md maps the model to still exists.
//
// The package has no code to import; see docs/model.md.
package model
