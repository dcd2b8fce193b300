package probes

import (
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

func TestEngineIndependence_MapsTheReport(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cf := &ASN{Number: 13335, Name: "CLOUDFLARENET - Cloudflare, Inc."}
	rep := Report{
		Endpoints: []EndpointIndependence{
			{Name: "alpha", CheckedAt: at, IPs: []IPInfo{{IP: "2606:4700::1", ASN: &ASN{Number: 13335}}, {IP: "104.16.1.1", ASN: cf}, {IP: "104.16.1.2", ASN: cf}, {IP: "2606:4700::2", ASNError: "timeout"}},
				TLS: &TLSInfo{IssuerOrg: "Google Trust Services", IssuerCN: "WE1", LeafFingerprint: "ab12"}},
			{Name: "beta", CheckedAt: at, IPs: []IPInfo{{IP: "203.0.113.5", ASNError: "SERVFAIL"}},
				TLS: &TLSInfo{IssuerCN: "Self CA", Error: "certificate signed by unknown authority"}},
			{Name: "gamma", CheckedAt: at, ResolveError: "no such host", IPs: nil},
			{Name: "delta", CheckedAt: at, IPs: []IPInfo{{IP: "198.51.100.1"}}}, // ASN lookups off
		},
		Domains:  map[string]string{"alpha": "d1", "beta": "d2", "gamma": "d3", "delta": "d4"},
		Warnings: []Warning{{Endpoints: []string{"beta"}, Reason: ReasonASNUnknown, Text: "ASN of beta unknown (SERVFAIL): cannot confirm it is independent"}},
	}
	info, domains, warnings := engineIndependence(rep)
	want := map[string]engine.IndependenceInfo{
		"alpha": {IPs: []string{"2606:4700::1", "104.16.1.1", "104.16.1.2", "2606:4700::2"}, ASNs: []string{"AS13335 CLOUDFLARENET - Cloudflare, Inc.", "unknown"},
			TLSIssuer: "O=Google Trust Services, CN=WE1", TLSFingerprint: "ab12", CheckedAt: at},
		"beta": {IPs: []string{"203.0.113.5"}, ASNs: []string{"unknown"}, TLSIssuer: "CN=Self CA",
			Error: "tls: certificate signed by unknown authority", CheckedAt: at},
		"gamma": {Error: "resolve: no such host", CheckedAt: at},
		"delta": {IPs: []string{"198.51.100.1"}, CheckedAt: at},
	}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("info:\n got %+v\nwant %+v", info, want)
	}
	if !maps.Equal(domains, rep.Domains) {
		t.Errorf("domains %v", domains)
	}
	wantW := []engine.Warning{{Endpoints: []string{"beta"}, Reason: "asn-unknown", Text: rep.Warnings[0].Text}}
	if !reflect.DeepEqual(warnings, wantW) {
		t.Errorf("warnings %+v, want %+v", warnings, wantW)
	}
}
