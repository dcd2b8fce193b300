package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// JSON-RPC error codes rpcdash answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	// CodeUpstream: no endpoint answered the request (every attempt
	// failed, none was routable, or its deadline passed). It is the
	// internal error: clients take it for the server's failure, and viem
	// retries it as it retries a direct node's HTTP 5xx or refused
	// connection; -32000 it takes for invalid input and never retries.
	CodeUpstream = CodeInternal
	// CodeFilterGone: a filter that cannot be polled (unknown, or its
	// endpoint refuses connections). geth's code for "filter not found":
	// viem creates a new filter on it.
	CodeFilterGone = -32000
	// CodeMethodNotSupported (EIP-1474): state HTTP cannot carry, such as
	// subscriptions.
	CodeMethodNotSupported = -32004
	// CodeLimitExceeded is EIP-1474's "limit exceeded": a batch over
	// server.max_batch, or rpcdash at server.max_inflight.
	CodeLimitExceeded = -32005
	// CodeResponseTooLarge: a batch's answers together passed
	// server.max_response_bytes (geth answers -32003 for the same).
	CodeResponseTooLarge = -32003
	// CodeMayHaveRun: a request sent once (a write, a method in no table)
	// that may have been carried out ended without an answer, cut by
	// server.shutdown_timeout or by its own deadline; clients do not retry
	// it on their own (a read ended so gets CodeUpstream, which they retry).
	CodeMayHaveRun = -32000
)

// Request is one JSON-RPC request. Raw, ID and Params alias the body given
// to ParseBody, which must not be modified while the Request is in use.
type Request struct {
	// Raw is the element exactly as received, trimmed of surrounding
	// whitespace; it is what goes upstream, so unknown members and the
	// exact id bytes survive.
	Raw    []byte
	ID     json.RawMessage // nil when the member is absent
	Method string
	Params json.RawMessage // nil when absent or null
}

// IsNotification reports whether the request has no "id" member.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return "json-rpc error " + strconv.Itoa(e.Code) + ": " + e.Message }

// Element is one request of a body. Exactly one of Req and Err is set; ID
// is the id to answer with (the request's, or null when the element was
// invalid and had no usable id).
type Element struct {
	Req *Request
	Err *Error
	ID  json.RawMessage
}

// NoAnswer reports whether the element gets no answer: a notification, run
// or, with invalid params, not run (geth answers neither). An element that
// is not a valid request is answered, with id null when it has no usable id.
func (el Element) NoAnswer() bool {
	if el.Err == nil {
		return el.Req.IsNotification()
	}
	return el.Err.Code == CodeInvalidParams && el.ID == nil
}

// Body is a parsed request body: one request, or a batch.
type Body struct {
	Batch    bool
	Elements []Element
}

// ParseBody parses a request body. A body that is not JSON (-32700), an
// empty batch or a single non-object (-32600) is answered as a whole with
// the returned error. Otherwise every element is reported on its own: an
// invalid one, batched or single, gets an Element with Err set, so that
// its id (when valid) can still be echoed.
func ParseBody(body []byte) (Body, *Error) { return ParseBodyLimit(body, 0) }

// ParseBodyLimit is ParseBody refusing, with -32005, a batch of more than
// maxBatch elements (0: no limit). The count is checked while scanning,
// before any element is materialised, so a body of millions of tiny
// elements costs no more memory than its bytes.
func ParseBodyLimit(body []byte, maxBatch int) (Body, *Error) {
	if !Valid(body) {
		if nestedBeyond(body, MaxDepth) {
			return Body{}, &Error{Code: CodeParseError, Message: fmt.Sprintf("parse error: body nested more than %d levels deep", MaxDepth)}
		}
		return Body{}, &Error{Code: CodeParseError, Message: "parse error: body is not valid JSON"}
	}
	b := TrimSpace(body)
	switch b[0] {
	case '{':
		// One allocation for the element and its request.
		s := new(struct {
			e [1]Element
			r Request
		})
		s.e[0] = parseElement(b, &s.r)
		return Body{Elements: s.e[:]}, nil
	case '[':
		return parseBatch(b, maxBatch)
	}
	return Body{}, invalidRequest("body must be a JSON object or array")
}

func parseBatch(b []byte, maxBatch int) (Body, *Error) {
	n := 0
	for it := (arrayIter{b: b, i: 1}); it.next(); {
		if n++; maxBatch > 0 && n > maxBatch {
			return Body{}, BatchTooLarge(maxBatch)
		}
	}
	if n == 0 {
		return Body{}, invalidRequest("empty batch")
	}
	elems := make([]Element, n)
	reqs := make([]Request, n)
	k := 0
	for it := (arrayIter{b: b, i: 1}); it.next(); k++ {
		v := b[it.vs:it.ve]
		if v[0] != '{' {
			elems[k] = Element{Err: invalidRequest("batch element is not an object")}
			continue
		}
		elems[k] = parseElement(v, &reqs[k])
	}
	return Body{Batch: true, Elements: elems}, nil
}

func parseElement(raw []byte, r *Request) Element {
	id, err := parseRequest(raw, r)
	if err != nil {
		return Element{Err: err, ID: id}
	}
	return Element{Req: r, ID: r.ID}
}

// parseRequest fills r from the valid JSON object raw. It returns the
// request's id even when the request is invalid, if the id itself is valid.
func parseRequest(raw []byte, r *Request) (json.RawMessage, *Error) {
	var version, id, method, params []byte
	folded := ""
	methods := false // "method" given twice, with two values
	ids, paramses := false, false
	for it := (memberIter{b: raw, i: 1}); it.next(); {
		v := raw[it.vs:it.ve]
		switch keyOf(raw[it.ks:it.ke]) {
		case keyJSONRPC:
			version = v
		case keyID:
			ids = ids || id != nil && !bytes.Equal(id, v)
			id = v
		case keyMethod:
			methods = methods || method != nil && !bytes.Equal(method, v)
			method = v
		case keyParams:
			paramses = paramses || params != nil && !bytes.Equal(params, v)
			params = v
		case keyOther:
			if k, ok := foldedMember(raw[it.ks:it.ke]); ok && folded == "" {
				folded = k
			}
		}
	}
	if id != nil {
		// Booleans are not ids to JSON-RPC 2.0, but geth answers them (it
		// refuses only objects and arrays), so rpcdash forwards them too.
		switch id[0] {
		case '"', 'n', 't', 'f', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			return nil, invalidRequest(`"id" must be a string, number or null`)
		}
	}
	if folded != "" {
		// "Method" is another member to JSON-RPC, but a node decoding
		// with Go's encoding/json (geth, erigon) or Newtonsoft reads it as
		// "method": rpcdash would route one request and the node carry out
		// another (a write hidden behind a read's name, sent to every
		// endpoint). Which id such a client waits for is as unclear.
		if strings.EqualFold(folded, "id") {
			id = nil
		}
		return id, invalidRequest(fmt.Sprintf(`member %q differs from %q only in case: JSON-RPC names are case-sensitive, and nodes disagree on such a request`,
			folded, foldedName(folded)))
	}
	if methods {
		// rpcdash reads the last, as Go's encoding/json (geth) does, and
		// sends the body as it came; a node or gateway that reads the first
		// (gjson, jsonparser) or refuses duplicates (serde: reth, Solana)
		// would carry out another method than the one routed: a write
		// behind a read's name, hedged and failed over to every endpoint.
		return id, invalidRequest(`"method" is given more than once, with different values: nodes disagree on which one such a request names`)
	}
	if !isVersion2(version) {
		return id, invalidRequest(`"jsonrpc" must be "2.0"`)
	}
	if method == nil {
		return id, invalidRequest(`"method" is missing`)
	}
	if method[0] != '"' {
		return id, invalidRequest(`"method" must be a string`)
	}
	name := decodeMethod(method)
	switch {
	case name == "":
		return id, invalidRequest(`"method" is empty`)
	case len(name) > MaxMethodLen:
		// geth's bound and wording.
		return id, invalidRequest(fmt.Sprintf("method name too long: %d > %d", len(name), MaxMethodLen))
	}
	if ids || paramses {
		raw = oneReading(raw, id, params, ids, paramses)
	}
	if params != nil {
		switch params[0] {
		case '[', '{':
		case 'n':
			// null means no params to most servers (geth among them).
			params = nil
		default:
			// geth answers -32602 ("non-array args"): the request is
			// well formed, its arguments are not.
			return id, &Error{Code: CodeInvalidParams, Message: `invalid params: "params" must be an array or object`}
		}
	}
	*r = Request{Raw: raw, ID: id, Method: name, Params: params}
	return id, nil
}

// oneReading is raw with every "id" member (when ids) and every "params"
// member (when paramses) given the last one's value, as rpcdash and geth
// read them. A node or gateway that reads the first of two different ids
// answered under an id rpcdash did not wait for: the answer was taken for
// another request's and the endpoint charged with it, three such
// requests opening a healthy endpoint's breaker. One that reads the first
// params would answer another question than its hedge's endpoint.
func oneReading(raw, id, params []byte, ids, paramses bool) []byte {
	if ids {
		raw = replaceMembers(raw, keyID, id)
	}
	if paramses {
		raw = replaceMembers(raw, keyParams, params)
	}
	return raw
}

// MaxMethodLen is the longest method name accepted, geth's bound.
const MaxMethodLen = 2048

func invalidRequest(why string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "invalid request: " + why}
}

func isVersion2(v []byte) bool {
	if string(v) == `"2.0"` {
		return true
	}
	s, ok := decodeString(v)
	return ok && s == "2.0"
}

// decodeMethod returns a known method name without allocating.
func decodeMethod(v []byte) string {
	if s, ok := knownMethods[string(v[1:len(v)-1])]; ok {
		return s
	}
	s, _ := decodeString(v)
	return s
}

// AppendError appends {"jsonrpc":"2.0","id":<id or null>,"error":{...}}.
func AppendError(dst []byte, id json.RawMessage, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
	if e.Data != nil {
		if data, err := json.Marshal(e.Data); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		}
	}
	return append(dst, "}}"...)
}

// AppendBatch appends "[" + parts joined by "," + "]", skipping empty parts
// (notifications). With no parts left it appends "[]"; a server sends no
// body at all in that case.
func AppendBatch(dst []byte, parts [][]byte) []byte {
	dst = append(dst, '[')
	first := true
	for _, p := range parts {
		if len(p) == 0 {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, p...)
	}
	return append(dst, ']')
}

// ResponseInfo describes an upstream response body.
type ResponseInfo struct {
	// Valid: a JSON object with a result, or an error object, and either
	// "jsonrpc":"2.0" or no "jsonrpc" member but an "id" (isAnswer).
	// Batches, truncated bodies and anything else are not.
	Valid      bool
	HasError   bool
	ErrCode    int
	ErrMessage string
	ResultNull bool
	// ResultEmptyList: the result is [] (eth_getLogs of a range with no
	// logs, or past the node's head).
	ResultEmptyList bool
}

// InspectResponse looks at an upstream's response body without copying the
// result.
func InspectResponse(body []byte) ResponseInfo {
	r, ok := scanResponse(body)
	if !ok || !r.isAnswer() {
		return ResponseInfo{}
	}
	info := ResponseInfo{Valid: true}
	if r.err != nil {
		info.HasError = true
		for it := (memberIter{b: r.err, i: 1}); it.next(); {
			v := r.err[it.vs:it.ve]
			switch keyOf(r.err[it.ks:it.ke]) {
			case keyCode:
				if n, ok := parseInt(v); ok {
					info.ErrCode = n
				}
			case keyMessage:
				info.ErrMessage, _ = decodeString(v)
			}
		}
		return info
	}
	info.ResultNull = r.result[0] == 'n'
	info.ResultEmptyList = r.result[0] == '[' && len(TrimSpace(r.result[1:len(r.result)-1])) == 0
	return info
}

// ResultString returns the result when it is a JSON string, such as
// eth_blockNumber's "0x1b4".
func ResultString(body []byte) (string, bool) {
	r, ok := scanResponse(body)
	if !ok || r.err != nil {
		return "", false
	}
	return decodeString(r.result)
}

// ResultUint64 returns the result when it is a non-negative JSON integer,
// such as Solana getSlot's.
func ResultUint64(body []byte) (uint64, bool) {
	r, ok := scanResponse(body)
	if !ok || r.err != nil || len(r.result) == 0 || len(r.result) > 20 {
		return 0, false
	}
	if r.result[0] == '0' && len(r.result) > 1 {
		return 0, false
	}
	var n uint64
	for _, c := range r.result {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

type response struct {
	version, id, result, err []byte // err is set only when it is an object
}

// isAnswer says whether a response object's members make it a JSON-RPC 2.0
// answer. A request must say "jsonrpc":"2.0" (parseRequest), but an answer
// without the member is taken: viem and ethers read an answer by its id,
// result and error alone, so a provider or node that leaves it out serves
// a client talking to it directly, and must serve one through rpcdash.
// Such an answer must still have an id (which the caller compares with
// the request's): without either it is no JSON-RPC at all, such as a
// provider's {"error":{"message":"invalid API key"}} beside an HTTP 401.
// A member naming anything but "2.0" ("1.0", null, 2.0 as a number) says
// the answer is not JSON-RPC 2.0.
func (r *response) isAnswer() bool {
	if r.version == nil {
		return r.id != nil
	}
	return isVersion2(r.version)
}

// scanResponse finds the members of a response object: a result, or an
// error object ("error": null next to a result counts as no error).
func scanResponse(body []byte) (response, bool) {
	if !Valid(body) {
		return response{}, false
	}
	b := TrimSpace(body)
	if b[0] != '{' {
		return response{}, false
	}
	var r response
	for it := (memberIter{b: b, i: 1}); it.next(); {
		v := b[it.vs:it.ve]
		switch keyOf(b[it.ks:it.ke]) {
		case keyJSONRPC:
			r.version = v
		case keyID:
			r.id = v
		case keyResult:
			r.result = v
		case keyError:
			r.err = v
		}
	}
	switch {
	case r.err == nil:
	case r.err[0] == '{':
		// Both a result and an error (not JSON-RPC 1.0's "result": null
		// beside its error) say two things: client libraries disagree on
		// which one wins.
		if r.result != nil && r.result[0] != 'n' {
			return response{}, false
		}
		return r, true
	case r.err[0] != 'n':
		return response{}, false
	default:
		r.err = nil
	}
	return r, r.result != nil
}

// NewRequest builds a request (a notification when id is nil).
func NewRequest(id json.RawMessage, method string, params json.RawMessage) *Request {
	raw := make([]byte, 0, 48+len(id)+len(method)+len(params))
	raw = append(raw, `{"jsonrpc":"2.0"`...)
	if id != nil {
		raw = append(raw, `,"id":`...)
		raw = append(raw, id...)
	}
	raw = append(raw, `,"method":`...)
	raw = appendString(raw, method)
	if params != nil {
		raw = append(raw, `,"params":`...)
		raw = append(raw, params...)
	}
	raw = append(raw, '}')
	r := &Request{}
	if _, err := parseRequest(raw, r); err != nil {
		// Only reachable with an id or params that are not valid JSON.
		return &Request{Raw: raw, ID: id, Method: method, Params: params}
	}
	return r
}

// WithParams returns a copy of the request with params replaced (every
// "params" member, should there be duplicates), every other member kept
// byte for byte.
func (r *Request) WithParams(params json.RawMessage) (*Request, error) {
	p := TrimSpace(params)
	if !Valid(p) || (p[0] != '[' && p[0] != '{') {
		return nil, errors.New("json-rpc: params must be a JSON array or object")
	}
	raw := TrimSpace(r.Raw)
	if len(raw) == 0 {
		return NewRequest(r.ID, r.Method, p), nil
	}
	if raw[0] != '{' || !Valid(raw) {
		return nil, errors.New("json-rpc: request is not a JSON object")
	}
	out, _ := spliceParams(raw, p)
	nr := &Request{}
	if _, err := parseRequest(out, nr); err != nil {
		return nil, err
	}
	return nr, nil
}

// WithStringParam is WithParams with params[i] replaced by the JSON string
// s (a filter id, on every poll), for a request ParseBody gave: it relies
// on that parse, and neither validates nor parses the request again (a
// string in place of a value of a valid array keeps it valid). false when
// params is not an array with an element i.
func (r *Request) WithStringParam(i int, s string) (*Request, bool) {
	p, ok := WithStringParam(r.Params, i, s)
	if !ok {
		return nil, false
	}
	raw := TrimSpace(r.Raw)
	if len(raw) == 0 {
		return NewRequest(r.ID, r.Method, p), true
	}
	out, at := spliceParams(raw, p)
	return &Request{Raw: out, ID: r.ID, Method: r.Method, Params: out[at : at+len(p)]}, true
}

// spliceParams is the request object raw with the value of every "params"
// member replaced by p, or a "params" member added when it has none; at is
// where the last one's value starts in out, the one a parse reads.
func spliceParams(raw, p []byte) (out []byte, at int) {
	out = make([]byte, 0, len(raw)+len(p)+12)
	last, end, found := 0, 1, false
	for it := (memberIter{b: raw, i: 1}); it.next(); {
		end = it.ve
		if keyOf(raw[it.ks:it.ke]) == keyParams {
			out = append(out, raw[last:it.vs]...)
			at = len(out)
			out = append(out, p...)
			last, found = it.ve, true
		}
	}
	if !found {
		out = append(out, raw[:end]...)
		if end > 1 {
			out = append(out, ',')
		}
		out = append(out, `"params":`...)
		at = len(out)
		out = append(out, p...)
		last = end
	}
	return append(out, raw[last:]...), at
}

// ResponseID is the id member of a response object, nil when absent.
func ResponseID(body []byte) json.RawMessage {
	b := TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	for it := (memberIter{b: b, i: 1}); it.next(); {
		if keyOf(b[it.ks:it.ke]) == keyID {
			return b[it.vs:it.ve]
		}
	}
	return nil
}

// SameID compares JSON-RPC ids by value: the same string (whatever its
// escapes) or the same number (whatever its spelling, 1 and 1.0 alike).
func SameID(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	return CanonicalID(a) == CanonicalID(b)
}

// Result is a response's result as it stands in body (not copied), or
// isErr for an error answer; ok is false when body is not a JSON-RPC answer.
func Result(body []byte) (result []byte, isErr, ok bool) {
	r, ok := scanResponse(body)
	if !ok {
		return nil, false, false
	}
	return r.result, r.err != nil, true
}
