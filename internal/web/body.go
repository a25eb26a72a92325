package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
)

// maxBodyBytes bounds a JSON request body; an order is a few hundred bytes.
const maxBodyBytes = 64 << 10

// readBody reads a JSON request body whole: the fingerprint needs the bytes
// and the decoder needs them again.
func ReadBody(c echo.Context) ([]byte, error) {
	if ct := c.Request().Header.Get(echo.HeaderContentType); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != echo.MIMEApplicationJSON {
			return nil, Fail(problem.UnsupportedMediaType, fmt.Sprintf("got Content-Type %q; send the body as application/json", ct))
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, Fail(problem.InvalidRequest, fmt.Sprintf("the body is larger than %d bytes", maxBodyBytes))
	}
	if err != nil {
		// The server's read timeout cut a slow client off, or the client
		// stopped sending: not the server's fault, and nothing is stored.
		return nil, &Failure{Kind: problem.RequestTimeout, Detail: "the body did not arrive whole in time"}
	}
	return body, nil
}

// decodeStrict decodes one JSON value into v, which must be a pointer. It
// refuses whatever would let a body mean something other than it says:
// invalid UTF-8 (a lenient decoder swaps it for U+FFFD), member names that
// match only when case is ignored ("Card" for "card"), a name given twice
// (of which a lenient decoder keeps the last), unknown names, and anything
// after the value, even a stray "]" or "}". encoding/json/v2's semantics
// (github.com/go-json-experiment/json) refuse all of these by default but
// unknown names, which RejectUnknownMembers adds.
func DecodeStrict(body []byte, v any) error {
	if !utf8.Valid(body) {
		return Fail(problem.InvalidRequest, "the body is not valid UTF-8")
	}
	if err := json.Unmarshal(body, v, json.RejectUnknownMembers(true)); err != nil {
		if trailing(body) {
			return Fail(problem.InvalidRequest, "the body holds more than one JSON value")
		}
		what, at := describeJSONError(err)
		return &Failure{Kind: problem.InvalidRequest, Detail: "the body is not valid JSON for this request: " + what,
			Errors: problem.At(at, what)}
	}
	return nil
}

// trailing reports whether body starts with one whole JSON value and goes
// on after it (with more than whitespace).
func trailing(body []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if _, err := dec.ReadValue(); err != nil {
		return false
	}
	_, err := dec.ReadToken()
	return !errors.Is(err, io.EOF)
}

// describeJSONError says what is wrong with a body in the client's terms:
// what, and where, as a JSON pointer such as /items/0/quantity ("" for the
// body as a whole).
func describeJSONError(err error) (what string, at string) {
	var syntax *jsontext.SyntacticError
	var semantic *json.SemanticError
	switch {
	case errors.As(err, &syntax) && errors.Is(syntax.Err, jsontext.ErrDuplicateName):
		return fmt.Sprintf("member %s appears twice", quoteName(syntax.JSONPointer)), string(syntax.JSONPointer)
	case errors.As(err, &syntax) && errors.Is(err, io.ErrUnexpectedEOF):
		if syntax.ByteOffset == 0 {
			return "the body is empty", ""
		}
		return "the body ends too early", ""
	case errors.As(err, &syntax):
		return fmt.Sprintf("syntax error at byte %d", syntax.ByteOffset), string(syntax.JSONPointer)
	case errors.As(err, &semantic) && errors.Is(semantic.Err, json.ErrUnknownName):
		return fmt.Sprintf("unknown member %s (names are case-sensitive)", quoteName(semantic.JSONPointer)), string(semantic.JSONPointer)
	case errors.As(err, &semantic) && semantic.GoType != nil:
		return fmt.Sprintf("%s must be %s, got %s", where(semantic.JSONPointer), jsonKindOf(semantic.GoType), kindName(semantic.JSONKind)), string(semantic.JSONPointer)
	}
	return "it cannot be decoded", ""
}

// quoteName quotes the last member name of a JSON pointer for an error
// detail, cut short: the name is the client's.
func quoteName(p jsontext.Pointer) string {
	name := p.LastToken()
	if len(name) > 40 {
		name = name[:40] + "…"
	}
	return strconv.Quote(name)
}

// where names a value by its JSON pointer, or "the body" for the whole.
func where(p jsontext.Pointer) string {
	if p == "" {
		return "the body"
	}
	return string(p)
}

// kindName names a JSON kind as the client wrote it.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "another value"
}

// jsonKindOf names what a Go type takes in JSON.
func jsonKindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
