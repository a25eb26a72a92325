package idem_test

import (
	"net/http"
	"testing"

	"exactlyonce/idem"
)

// A work sets Location on JSON's answer before it looks at the error (the
// error is returned with it anyway): that must not panic when the value
// cannot be encoded.
func TestJSONHeaderIsUsableOnError(t *testing.T) {
	resp, err := idem.JSON(http.StatusCreated, func() {})
	if err == nil {
		t.Fatal("a func encoded as JSON: want an error")
	}
	resp.Header["Location"] = "/transfers/1"
	if resp.Status != 0 || resp.Body != nil {
		t.Errorf("the answer beside the error: got status %d and body %q, want neither", resp.Status, resp.Body)
	}

	resp, err = idem.JSON(http.StatusCreated, map[string]int{"id": 1})
	if err != nil {
		t.Fatal(err)
	}
	resp.Header["Location"] = "/transfers/1"
	if resp.Status != http.StatusCreated || string(resp.Body) != `{"id":1}` ||
		resp.Header["Content-Type"] != "application/json" || resp.Header["Location"] != "/transfers/1" {
		t.Errorf("got %+v", resp)
	}
}

// Created answers 201 with the JSON body and the new resource's Location.
func TestCreated(t *testing.T) {
	resp, err := idem.Created("/transfers/1", map[string]int{"id": 1})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusCreated || string(resp.Body) != `{"id":1}` ||
		resp.Header["Content-Type"] != "application/json" || resp.Header["Location"] != "/transfers/1" {
		t.Errorf("got %+v", resp)
	}
	if _, err := idem.Created("/transfers/2", func() {}); err == nil {
		t.Error("a func encoded as JSON: want an error")
	}
}
