package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// maxJSONDepth bounds the nesting checkMembers follows; an order nests
// three deep.
const maxJSONDepth = 16

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// checkMembers refuses what encoding/json would quietly accept: a member
// name that matches a field only when case is ignored ("Card" for "card"),
// and a name given twice, of which the decoder keeps the last. Either lets
// two different bodies decode to one request, or one body mean something
// other than it says. Names are checked against t, the type the body will
// be decoded into; below a type that decodes itself (json.Unmarshaler) or
// a map, only duplicates are refused.
func checkMembers(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return walkJSON(dec, t, 0)
}

func walkJSON(dec *json.Decoder, t reflect.Type, depth int) error {
	if depth > maxJSONDepth {
		return errors.New("the body nests too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return errors.New("the body is not valid JSON")
	}
	t = deref(t)
	switch tok {
	case json.Delim('{'):
		fields := jsonFields(t)
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Map {
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for dec.More() {
			nameTok, err := dec.Token()
			if err != nil {
				return errors.New("the body is not valid JSON")
			}
			name, _ := nameTok.(string)
			if seen[name] {
				return fmt.Errorf("member %s appears twice", quoteName(name))
			}
			seen[name] = true
			next := elem
			if fields != nil {
				ft, ok := fields[name]
				if !ok {
					return fmt.Errorf("unknown member %s (names are case-sensitive)", quoteName(name))
				}
				next = ft
			}
			if err := walkJSON(dec, next, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return errors.New("the body is not valid JSON")
		}
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkJSON(dec, elem, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return errors.New("the body is not valid JSON")
		}
	}
	return nil
}

// deref strips pointers, and returns nil for a type whose JSON form its own
// code decides (its members cannot be known from its fields).
func deref(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil
	}
	return t
}

// jsonFields maps the exact member names of a struct type to their field
// types, as encoding/json names them; nil when t is not a struct.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && deref(f.Type) != nil && deref(f.Type).Kind() == reflect.Struct {
			for n, ft := range jsonFields(deref(f.Type)) {
				fields[n] = ft
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

// quoteName quotes a client's member name for an error detail, cut short.
func quoteName(name string) string {
	if len(name) > 40 {
		name = name[:40] + "…"
	}
	return fmt.Sprintf("%q", name)
}
