package sim

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"
)

func TestControl_CountersEndpoint(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	call(t, c, u, "eth_chainId")
	post(t, c, u.URL(), `[{"id":1,"method":"eth_blockNumber"},{"id":2,"method":"eth_chainId"}]`)

	resp, err := c.Get(u.URL() + "/_sim/counters")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got Counters
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := Counters{
		Total: 3, HTTP: 2,
		ByMethod: map[string]int64{"eth_chainId": 2, "eth_blockNumber": 1},
		ByStatus: map[int]int64{200: 2},
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(u.Counters(), want) {
		t.Fatalf("counters %+v, want %+v (control calls are not counted)", got, want)
	}
}

func TestControl_ModeAndReset(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	control := func(body string) int {
		t.Helper()
		status, _, _ := post(t, c, u.URL()+"/_sim/mode", body)
		return status
	}

	if s := control(`{"mode":"error"}`); s != 200 {
		t.Fatalf("set error mode: %d", s)
	}
	if status, _, _ := post(t, c, u.URL(), requestBody("eth_chainId")); status != 500 {
		t.Fatalf("error mode answered %d", status)
	}
	if s := control(`{"extra_latency":"150ms"}`); s != 200 || u.Mode() != ModeError {
		t.Fatalf("extra_latency alone: status %d, mode %q (must stay)", s, u.Mode())
	}
	if s := control(`{"mode":""}`); s != 200 {
		t.Fatalf("clear mode: %d", s)
	}
	begin := time.Now()
	call(t, c, u, "eth_chainId")
	if took := time.Since(begin); took < 150*time.Millisecond {
		t.Fatalf("extra latency not applied: %v", took)
	}

	for _, bad := range []string{`{"mode":"nap"}`, `{"extra_latency":"soon"}`, `{"mode":"hang","error_rate":2}`, `{"bogus":1}`, `not json`} {
		if s := control(bad); s != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", bad, s)
		}
	}
	if u.Mode() != ModeNormal {
		t.Fatalf("a rejected request changed the mode to %q", u.Mode())
	}
	if s := control(`{"head_lag":3,"head_frozen":true,"unhealthy":true,"error_rate":0,"rate_limit_rate":0}`); s != 200 {
		t.Fatalf("extra fields: %d", s)
	}

	post(t, c, u.URL(), requestBody("eth_sendRawTransaction", "0x01"))
	if status, _, _ := post(t, c, u.URL()+"/_sim/reset", ""); status != 200 {
		t.Fatalf("reset: %d", status)
	}
	if got := u.Counters(); got.Total != 0 || got.HTTP != 0 || len(got.ByStatus) != 0 || len(u.Submissions()) != 0 {
		t.Fatalf("after reset: %+v, submissions %q", got, u.Submissions())
	}
	if status, _, _ := post(t, c, u.URL()+"/_sim/nothing", ""); status != http.StatusNotFound {
		t.Fatalf("unknown control route: %d", status)
	}
}
