// Package views renders the shop's HTML pages with templ. Each page is a
// component that takes a view model from models.go: plain strings and
// numbers, formatted for people, so that no database or engine type reaches
// a template and a page can be rendered from a literal in a test.
package views
