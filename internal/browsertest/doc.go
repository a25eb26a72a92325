// Package browsertest drives the browser checkout in headless Chromium with
// chromedp, against the whole application on a fresh database, to show what
// the handler tests cannot: a real browser double-clicking the pay button,
// cancelling its first request for the second, and going Back to a form it
// restores from its cache. Its tests are the shop's; the package itself is
// the chromedp driver they share with the demo's browser tests (demo/lab),
// which is why it is not a _test file.
//
// Without Chromium the tests skip, except under CI (CI=true), where a
// missing browser is a failure: `make test` installs it.
package browsertest
