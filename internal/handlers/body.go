package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
)

// maxBodyBytes bounds a JSON request body; an order is a few hundred bytes.
const maxBodyBytes = 64 << 10

// readBody reads a JSON request body whole: the fingerprint needs the bytes
// and the decoder needs them again.
func readBody(c echo.Context) ([]byte, error) {
	if ct := c.Request().Header.Get(echo.HeaderContentType); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != echo.MIMEApplicationJSON {
			return nil, fail(problem.UnsupportedMediaType, fmt.Sprintf("got Content-Type %q", ct))
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, fail(problem.InvalidRequest, fmt.Sprintf("the body is larger than %d bytes", maxBodyBytes))
	}
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return body, nil
}

// decodeStrict decodes one JSON value into v, which must be a pointer. It
// refuses whatever would let a body mean something other than it says:
// invalid UTF-8 (the decoder would swap it for U+FFFD), member names that
// match only when case is ignored, duplicate or unknown names, and anything
// after the value, even a stray "]" or "}".
func decodeStrict(body []byte, v any) error {
	if !utf8.Valid(body) {
		return fail(problem.InvalidRequest, "the body is not valid UTF-8")
	}
	if err := checkMembers(body, reflect.TypeOf(v)); err != nil {
		return fail(problem.InvalidRequest, "the body is not valid JSON for this request: "+err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fail(problem.InvalidRequest, "the body is not valid JSON for this request: "+describeJSONError(err))
	}
	if rest := bytes.Trim(body[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return fail(problem.InvalidRequest, "the body holds more than one JSON value")
	}
	return nil
}

func describeJSONError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("syntax error at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s must be %s, got %s", typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends too early"
	}
	// DisallowUnknownFields' error names the field: `json: unknown field "x"`.
	return err.Error()
}
