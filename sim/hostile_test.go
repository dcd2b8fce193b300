package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestHostile_HugeAnswerStreamsAValidAnswerOfTheSize(t *testing.T) {
	u := start(t, Config{})
	mode, size := string(ModeHugeAnswer), int64(3<<20+17)
	if err := u.Apply(ControlRequest{Mode: &mode, HugeBytes: &size}); err != nil {
		t.Fatal(err)
	}
	resp, err := newClient(t).Post(u.URL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":"big","method":"eth_getLogs","params":[{}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != -1 {
		t.Errorf("Content-Length %d: the huge answer must stream without one", resp.ContentLength)
	}
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || string(r.ID) != `"big"` {
		t.Fatalf("not a JSON-RPC answer: %v (id %s)", err, r.ID)
	}
	if got := int64(len(r.Result)) + int64(len(`{"jsonrpc":"2.0","id":"big","result":}`)); got != size {
		t.Errorf("answer of %d bytes, want %d", got, size)
	}
}

func TestHostile_TrickleSendsOneBytePerInterval(t *testing.T) {
	u := start(t, Config{})
	mode, pace := string(ModeTrickle), "20ms"
	if err := u.Apply(ControlRequest{Mode: &mode, TrickleInterval: &pace}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	resp, err := newClient(t).Post(u.URL(), "application/json", strings.NewReader(requestBody("eth_chainId")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	headers := time.Since(began)
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || string(r.Result) != `"0x7a69"` {
		t.Fatalf("trickled answer %+v: %v", r, err)
	}
	// The answer is whole in the end and took at least a pace per byte
	// after the first; the headers came before it.
	if took, least := time.Since(began), time.Duration(resp.ContentLength-1)*20*time.Millisecond; took < least || headers >= took {
		t.Fatalf("answer of %d bytes took %s (headers after %s), want at least %s", resp.ContentLength, took, headers, least)
	}
}

func TestHostile_MalformedStatusLineHasJunkInPlaceOfTheCode(t *testing.T) {
	u := start(t, Config{})
	mode, junk := string(ModeMalformedStatus), 4096
	if err := u.Apply(ControlRequest{Mode: &mode, JunkBytes: &junk}); err != nil {
		t.Fatal(err)
	}
	_, err := newClient(t).Post(u.URL(), "application/json", strings.NewReader(requestBody("eth_chainId")))
	if err == nil || !strings.Contains(err.Error(), "malformed HTTP status code") || len(err.Error()) < junk {
		t.Fatalf("error %.200q: want Go's malformed status code error quoting the %d bytes of junk", err, junk)
	}
	if got := u.Counters().Total; got != 1 {
		t.Errorf("counted %d requests, want 1", got)
	}
}

func TestHostile_ControlRefusesBadParameters(t *testing.T) {
	u := start(t, Config{})
	neg, pace, junk := int64(-1), "soon", 1<<30
	for _, c := range []ControlRequest{{HugeBytes: &neg}, {TrickleInterval: &pace}, {JunkBytes: &junk}} {
		if err := u.Apply(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := ParseMode("malformed_status"); err != nil {
		t.Fatal(err)
	}
}
