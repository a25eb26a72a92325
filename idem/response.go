package idem

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// HeaderReplayed marks an answer replayed from the store
// (Idempotent-Replayed: true, as Stripe and the IETF draft's examples do).
// It is sent on replays only, never on a fresh answer.
const HeaderReplayed = "Idempotent-Replayed"

// JSON is a Response of status with v encoded as its JSON body, for a
// Work to return. Its Header is never nil, so a Work may set a header
// (Location) before it looks at the error; when v cannot be encoded, the
// Response has no status and no body, and the error is for the Work to
// return.
func JSON(status int, v any) (Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Response{Header: map[string]string{}}, fmt.Errorf("encode response: %w", err)
	}
	return Response{Status: status, Header: map[string]string{"Content-Type": "application/json"}, Body: b}, nil
}

// Created is the answer to a request that made a resource: 201 with v
// encoded as its JSON body and Location naming the new resource (its
// path, or a URL), as JSON returns it otherwise.
func Created(location string, v any) (Response, error) {
	resp, err := JSON(http.StatusCreated, v)
	if err != nil {
		return resp, err
	}
	resp.Header["Location"] = location
	return resp, nil
}

// Redirect is a Response that sends the browser to location with 303 See
// Other (post/redirect/get), for a form's Work to return.
func Redirect(location string) Response {
	return Response{Status: http.StatusSeeOther, Header: map[string]string{"Location": location}}
}
