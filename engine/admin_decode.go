package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// decodeJSON reads an admin request body into the struct v, refusing
// unknown fields. Its errors start with the field at fault, as every admin
// 400 does: `enabled: "no" is not a boolean`, `bogus: unknown field
// (fields: enabled, delay, …)`; "request body: …" when the body as a whole
// is at fault.
func decodeJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return errors.New("request body: could not be read")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("request body: a JSON object is required")
		}
		return fieldError(err, body, v)
	}
	return nil
}

// fieldError names the field a decoding error is about.
func fieldError(err error, body []byte, v any) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		var members map[string]json.RawMessage
		json.Unmarshal(body, &members)
		top, _, _ := strings.Cut(typeErr.Field, ".")
		given := redact.Sanitize(string(members[top]), 64)
		if given == "" {
			given = typeErr.Value
		}
		return fmt.Errorf("%s: %s is not %s", typeErr.Field, given, jsonKind(typeErr.Type))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("%s: unknown field (fields: %s)", redact.Sanitize(strings.Trim(name, `"`), 64), strings.Join(jsonFields(v), ", "))
	}
	return errors.New("request body: " + strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names a Go type as JSON, with its article.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// jsonFields lists the JSON names of the struct v points to, in order.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}
