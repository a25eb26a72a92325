// Package web is what the shop's two faces share: the browser pages
// (internal/handlers) and the JSON API (internal/api). It holds the one
// mapping of every error onto its row of the error table (Classify) and
// its two renderers, problem+json (WriteProblem) and an HTML page
// (WritePage), chosen per route set (RouteSet) rather than by URL; strict
// JSON bodies; the Host allow-list and the security headers; and the quotas
// and write limits (Limits), one set of buckets for both faces, so that a
// client cannot double its allowance by switching between them.
package web
