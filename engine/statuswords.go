package engine

import (
	"bytes"
	"encoding/json"
	"html"
	"strings"
)

// statusWordsScan bounds how much of a failed answer's body is looked at
// for its words: providers say why in the first line or a small object;
// a megabyte error page is not read for them.
const statusWordsScan = 16 << 10

// statusWords is what a failed HTTP answer that is not a JSON-RPC error says
// in its body, as a client talking to the provider directly would read it:
// the message of a JSON object ({"error":"invalid API key"},
// {"message":…}, {"error":{"message":…}}), the title of an HTML error page
// (a CDN's "502 Bad Gateway"), or the first line of plain text (Infura's
// "invalid project id"). Empty when the body says nothing readable. The
// caller scrubs and cuts it like every upstream text.
func statusWords(body []byte) string {
	body = bytes.TrimSpace(body[:min(len(body), statusWordsScan)])
	if len(body) == 0 {
		return ""
	}
	switch body[0] {
	case '{':
		return jsonWords(body)
	case '<':
		return htmlTitle(body)
	}
	return firstLine(body)
}

func firstLine(body []byte) string {
	line, _, _ := bytes.Cut(body, []byte("\n"))
	return string(bytes.TrimSpace(line))
}

// jsonWords is the first of the fields providers put their reason in.
func jsonWords(body []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return firstLine(body)
	}
	for _, key := range []string{"error", "message", "msg", "detail", "error_description", "reason"} {
		raw, ok := obj[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
	}
	return ""
}

// htmlTitle is an HTML page's <title>, or "an HTML page" when it has none.
func htmlTitle(body []byte) string {
	lower := bytes.ToLower(body)
	start := bytes.Index(lower, []byte("<title"))
	if start >= 0 {
		if gt := bytes.IndexByte(lower[start:], '>'); gt >= 0 {
			from := start + gt + 1
			if end := bytes.Index(lower[from:], []byte("</title")); end >= 0 {
				if t := strings.Join(strings.Fields(html.UnescapeString(string(body[from:from+end]))), " "); t != "" {
					return "HTML page: " + t
				}
			}
		}
	}
	return "an HTML page"
}
