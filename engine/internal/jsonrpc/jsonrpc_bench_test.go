package jsonrpc

import (
	"strconv"
	"strings"
	"testing"
)

const benchCall = `{"jsonrpc":"2.0","id":42,"method":"eth_call","params":[{"to":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","data":"0x70a08231000000000000000000000000f977814e90da44bfa03b6295a0616a897441acec"},"latest"]}`

func benchBatch(n int) []byte {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strings.Replace(benchCall, `"id":42`, `"id":`+strconv.Itoa(i), 1)
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}

func BenchmarkParseBody(b *testing.B) {
	for _, bc := range []struct {
		name string
		body []byte
	}{{"single", []byte(benchCall)}, {"batch10", benchBatch(10)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				if _, err := ParseBody(bc.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkInspectResponse(b *testing.B) {
	logs := make([]string, 200)
	for i := range logs {
		logs[i] = `{"address":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","0x000000000000000000000000f977814e90da44bfa03b6295a0616a897441acec"],"data":"0x00000000000000000000000000000000000000000000000000000000000f4240","blockNumber":"0x10d4f3a","logIndex":"0x` + strconv.FormatInt(int64(i), 16) + `","removed":false}`
	}
	for _, bc := range []struct {
		name string
		body []byte
	}{
		{"small", []byte(`{"jsonrpc":"2.0","id":42,"result":"0x0000000000000000000000000000000000000000000000000000000005f5e100"}`)},
		{"error", []byte(`{"jsonrpc":"2.0","id":42,"error":{"code":-32000,"message":"execution reverted"}}`)},
		{"logs200", []byte(`{"jsonrpc":"2.0","id":42,"result":[` + strings.Join(logs, ",") + `]}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				if !InspectResponse(bc.body).Valid {
					b.Fatal("invalid")
				}
			}
		})
	}
}

func BenchmarkMethodTable(b *testing.B) {
	tab := NewMethodTable("evm", MethodLists{Weights: map[string]float64{"eth_getlogs": 20}})
	b.ReportAllocs()
	for b.Loop() {
		if tab.Class("eth_getBalance") != ClassRead || !tab.Hedgeable("eth_getLogs") || tab.Weight("eth_getLogs") != 20 {
			b.Fatal("wrong table")
		}
	}
}

// BenchmarkFilterIDTranslation is a filter poll's id translation: in place
// of the parsed request, and as WithParams over the replaced params (what
// it was), which validates and parses the request again.
func BenchmarkFilterIDTranslation(b *testing.B) {
	body, perr := ParseBody([]byte(`{"jsonrpc":"2.0","id":42,"method":"eth_getFilterChanges","params":["0x3c4f1b8e2a9d47f0b6e5c1a2d3f4e5a6"]}`))
	if perr != nil {
		b.Fatal(perr)
	}
	r := body.Elements[0].Req
	const upstream = "0x1f"
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := r.WithStringParam(0, upstream); !ok {
				b.Fatal("not replaced")
			}
		}
	})
	b.Run("withparams", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			params, _ := WithStringParam(r.Params, 0, upstream)
			if _, err := r.WithParams(params); err != nil {
				b.Fatal(err)
			}
		}
	})
}
