package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// AdminClient calls a running rpcdash's admin API: the one client behind
// the console's attach mode, bench --admin and the drill, and the
// end-to-end tests. Each says a failure in its own words from AdminError.
type AdminClient struct {
	Base  string // "http://host:port"; a trailing slash is ignored
	Token string // server.admin_token, sent as a bearer token when set
	// Actor is who the calls act for in the instance's events
	// (headerActor); "" is the admin API's own, "admin".
	Actor    Actor
	HTTP     *http.Client // nil: http.DefaultClient
	MaxBytes int64        // the answer held in memory at most (a longer 200 answer is ErrAnswerTooLarge); 0: 64 MiB
}

// AdminError is a call that failed. Code is the HTTP status of an answer
// other than 200 (0 when there was none), with Text the API's error
// ({"error": …}, FromAPI) or the body's start. Without a Code, Err is why:
// the instance could not be reached, its answer broke off (Reading), or a
// 200 answer did not decode (Decoding).
type AdminError struct {
	Code              int
	Text              string
	FromAPI           bool
	Reading, Decoding bool
	// Err is also, with a Code, a *promotionRefusedError when the answer
	// was a promotion refused on the endpoint's evidence (409 with
	// "promotion"), so that errors.As finds it as it does in process.
	Err error
}

func (e *AdminError) Error() string {
	switch {
	case e.Code != 0:
		return fmt.Sprintf("HTTP %d: %s", e.Code, e.Text)
	case e.Decoding:
		return "not an rpcdash answer: " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *AdminError) Unwrap() error { return e.Err }

// NotRpcdash reports an answer no rpcdash admin API gives: a status other
// than 200 whose body is not the API's {"error": …}, such as a web
// server's error page or a JSON-RPC node's error object. The one other
// JSON an rpcdash admin port answers is its 503 past server.max_conns (a
// JSON-RPC error, as on the RPC port), so a 503 in JSON is not counted.
func (e *AdminError) NotRpcdash() bool {
	return e.Code != 0 && !e.FromAPI &&
		!(e.Code == http.StatusServiceUnavailable && strings.HasPrefix(e.Text, "{"))
}

// NotRpcdashText is what the commands say of such an answer, in place of
// its text: "HTTP 405, not an rpcdash answer".
func (e *AdminError) NotRpcdashText() string {
	return fmt.Sprintf("HTTP %d, not an rpcdash answer", e.Code)
}

// ErrAnswerTooLarge is a 200 answer longer than AdminClient.MaxBytes,
// which no rpcdash gives: it is refused whole rather than used cut.
var ErrAnswerTooLarge = errors.New("answer larger than the admin client reads")

// Do sends method path with body as JSON (none when nil) and decodes the
// answer into out: JSON, or the raw bytes when out is a *[]byte; nothing
// when out is nil.
func (c AdminClient) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+path, rd)
	if err != nil {
		return err
	}
	if method != http.MethodGet {
		// The admin API refuses a mutating call without it (a guard
		// against cross-site requests), body or not.
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Actor != "" {
		req.Header.Set(headerActor, string(c.Actor))
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// Its text repeats the URL, and a key may be in the base's
			// path; the admin call's own path is ours, and shown: a
			// drill's "Get …/REDACTED" read as if a secret were there.
			ue.URL = strings.TrimSuffix(ShownURL(c.Base), "/") + path
		}
		return &AdminError{Err: err}
	}
	defer resp.Body.Close()
	limit := c.MaxBytes
	if limit <= 0 {
		limit = 64 << 20
	}
	// One byte past the limit tells an answer cut from one that fits.
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return &AdminError{Reading: true, Err: err}
	}
	if int64(len(data)) > limit {
		if resp.StatusCode == http.StatusOK {
			// A cut answer is not the answer: printed as one (status
			// --json) it was invalid JSON with exit 0.
			return &AdminError{Reading: true, Err: fmt.Errorf("%w (%d bytes): cut, not used", ErrAnswerTooLarge, limit)}
		}
		data = data[:limit] // an error's text is shown from its start
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error     string
			Promotion *Promotion
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			ae := &AdminError{Code: resp.StatusCode, Text: ShownText(c.unechoed(e.Error)), FromAPI: true}
			if e.Promotion != nil && resp.StatusCode == http.StatusConflict {
				ae.Err = &promotionRefusedError{Promotion: *e.Promotion}
			}
			return ae
		}
		return &AdminError{Code: resp.StatusCode, Text: ShownText(c.unechoed(strings.TrimSpace(string(data[:min(len(data), 200)]))))}
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o = data
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &AdminError{Decoding: true, Err: err}
	}
	return nil
}

// unechoed is an answer's text with the base URL's path, which may hold a
// key, REDACTED: an answer may repeat the path it was asked for (the
// admin API's 404 does).
func (c AdminClient) unechoed(text string) string {
	u, err := url.Parse(c.Base)
	if err != nil {
		return text
	}
	if p := strings.Trim(u.EscapedPath(), "/"); p != "" {
		text = strings.ReplaceAll(text, p, "REDACTED")
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		text = strings.ReplaceAll(text, p, "REDACTED")
	}
	return text
}
