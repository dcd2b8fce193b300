package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// adminBodyLimit bounds an admin call's body.
const adminBodyLimit = 1 << 20

// errAdminBodyTooLarge refuses a body over adminBodyLimit (HTTP 413).
var errAdminBodyTooLarge = fmt.Errorf("request body: over the admin API's limit of %d bytes (1 MiB)", adminBodyLimit)

// errAdminBodyTimeout refuses a body still arriving at server.read_timeout
// (HTTP 408, as the RPC port answers it).
var errAdminBodyTimeout = errors.New("request body: not received within server.read_timeout")

// writeBodyError answers an admin call whose body decodeJSON or noBody
// refused: 413 when it was too large, 408 when it came too slowly, else 400.
func writeBodyError(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	switch {
	case errors.Is(err, errAdminBodyTooLarge):
		status = http.StatusRequestEntityTooLarge
	case errors.Is(err, errAdminBodyTimeout):
		status = http.StatusRequestTimeout
	}
	writeAPIError(w, status, err.Error())
}

// readAdminBody reads an admin call's body whole. One over adminBodyLimit
// is refused, not cut: what was left of a cut body could decode, and be
// applied, without what followed it.
func readAdminBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, adminBodyLimit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, errAdminBodyTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, errAdminBodyTimeout
	case err != nil:
		return nil, errors.New("request body: could not be read")
	}
	return body, nil
}

// decodeJSON reads an admin request body into the struct v, refusing
// unknown fields, fields named in another case and fields given twice
// (exactMembers). Its errors start with the field at fault, as every
// admin 400 does: `enabled: "no" is not a boolean`, `bogus: unknown field
// (fields: enabled, delay, …)`; "request body: …" when the body as a whole
// is at fault.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readAdminBody(w, r)
	if err != nil {
		return err
	}
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return errors.New("request body: a JSON object is required")
	}
	if err := exactMembers(body, jsonFields(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fieldError(err, body, v)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("request body: must be one JSON object, and more follows it")
	}
	return nil
}

// exactMembers checks the members of the JSON object body against fields,
// the names its struct takes, where encoding/json is lenient: it matches a
// name in any case ("Mode" is read as "mode") and lets the last of two
// members of a name win, so a body that reads as one call to a person, a
// log or a proxy's filter would be applied as another. The RPC port
// refuses "Method" for the same reason (jsonrpc.parseRequest). Admin
// bodies are flat: only the object's own members are checked. A body
// that is not valid JSON is left to the decoder to describe.
func exactMembers(body []byte, fields []string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	seen := make(map[string]bool, len(fields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		quoted := redact.Sanitize(name, 64)
		switch {
		case seen[name]:
			return fmt.Errorf("%s: given more than once", quoted)
		case slices.Contains(fields, name):
			seen[name] = true
		default:
			for _, f := range fields {
				if strings.EqualFold(name, f) {
					return fmt.Errorf("%s: differs from %s only in case: field names are case-sensitive", quoted, f)
				}
			}
			return fmt.Errorf("%s: unknown field (fields: %s)", quoted, strings.Join(fields, ", "))
		}
	}
	return nil
}

// noBody refuses a body on an admin call that takes none (drain, undrain,
// clearing a fault): empty, null or an empty object {}.
func noBody(w http.ResponseWriter, r *http.Request) error {
	body, err := readAdminBody(w, r)
	if err != nil {
		return err
	}
	switch t := bytes.TrimSpace(body); {
	case len(t) == 0, string(t) == "null":
		return nil
	case json.Valid(t) && t[0] == '{' && len(bytes.TrimSpace(t[1:len(t)-1])) == 0:
		return nil // {}
	default:
		return fmt.Errorf("request body: %s %s takes none (or {}), got %s", r.Method, r.URL.Path, redact.Sanitize(string(t), 64))
	}
}

// onlyParams refuses query parameters a GET with parameters does not take,
// naming the first: a misspelt one (snce) would otherwise be dropped and
// the answer would not be the one asked for.
func onlyParams(q url.Values, known ...string) error {
	for key := range q {
		if !slices.Contains(known, key) {
			return fmt.Errorf("%s: unknown parameter (%s)", redact.Sanitize(key, 64), strings.Join(known, ", "))
		}
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
