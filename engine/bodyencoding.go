package engine

import (
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"strings"
)

// A client may compress its request body (Content-Encoding: gzip or
// deflate), a large batch most of all. net/http decodes
// answers, not requests, so rpcdash decodes the body itself, and
// server.max_body_bytes bounds the decoded bytes as well as those
// received: a small compressed body cannot expand past what a plain one
// may hold. Upstreams get the body plain.

// acceptedEncodings names the codings a request body may have, for the
// Accept-Encoding of a 415 (RFC 9110 §15.5.16).
const acceptedEncodings = "gzip, deflate"

// unsupportedEncodingError: the body's Content-Encoding is not one rpcdash
// decodes. Nothing of the body was read.
type unsupportedEncodingError struct{ coding string }

func (e *unsupportedEncodingError) Error() string {
	return "Content-Encoding " + quoteShort(e.coding) + " is not supported: send the body plain, gzip or deflate"
}

// bodyDecodeError: the body is not valid in its Content-Encoding.
type bodyDecodeError struct {
	coding string
	err    error
}

func (e *bodyDecodeError) Error() string {
	return "request body is not valid " + e.coding + " (its Content-Encoding): " + e.err.Error()
}

// decodedTooLargeError: the body, decoded, is over server.max_body_bytes.
type decodedTooLargeError struct{ coding string }

func (e *decodedTooLargeError) Error() string { return "request body over the limit once decoded" }

// bodyCoding is the one coding of h's Content-Encoding, "" for none or
// identity. Codings applied one over another are not taken: no client
// sends them.
func bodyCoding(h http.Header) (string, error) {
	var codings []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	switch {
	case len(codings) == 0:
		return "", nil
	case len(codings) > 1:
		return "", &unsupportedEncodingError{coding: strings.Join(codings, ", ")}
	case codings[0] == "gzip" || codings[0] == "x-gzip":
		return "gzip", nil
	case codings[0] == "deflate":
		return "deflate", nil
	}
	return "", &unsupportedEncodingError{coding: codings[0]}
}

// decodingReader decodes coding from src, opening the decoder at the first
// Read so that a slow or short header fails as any body read does. An
// error of src's own (too large, too slow, shutdown) is returned as it is;
// any other is the coding's.
type decodingReader struct {
	src    *sourceReader
	coding string
	dec    io.Reader
}

func newDecodingReader(coding string, src io.Reader) *decodingReader {
	return &decodingReader{src: &sourceReader{r: src}, coding: coding}
}

func (d *decodingReader) Read(p []byte) (int, error) {
	if d.dec == nil {
		var err error
		if d.coding == "gzip" {
			d.dec, err = gzip.NewReader(d.src)
		} else {
			d.dec, err = zlib.NewReader(d.src)
		}
		if err != nil {
			d.dec = nil
			return 0, d.cause(err)
		}
	}
	n, err := d.dec.Read(p)
	if err != nil && err != io.EOF {
		err = d.cause(err)
	}
	return n, err
}

func (d *decodingReader) cause(err error) error {
	if d.src.err != nil && !errors.Is(d.src.err, io.EOF) {
		return d.src.err
	}
	return &bodyDecodeError{coding: d.coding, err: err}
}

// sourceReader remembers the last error its reader returned.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil {
		s.err = err
	}
	return n, err
}
