package probes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
)

// engineIndependence turns a Report into what engine.SetIndependence takes.
func engineIndependence(rep Report) (map[string]engine.IndependenceInfo, map[string]string, []engine.Warning) {
	info := make(map[string]engine.IndependenceInfo, len(rep.Endpoints))
	for _, ep := range rep.Endpoints {
		info[ep.Name] = endpointInfo(ep)
	}
	warnings := make([]engine.Warning, 0, len(rep.Warnings))
	for _, w := range rep.Warnings {
		warnings = append(warnings, engine.Warning{Endpoints: slices.Clone(w.Endpoints), Reason: w.Reason, Text: w.Text})
	}
	return info, rep.Domains, warnings
}

func endpointInfo(ep EndpointIndependence) engine.IndependenceInfo {
	out := engine.IndependenceInfo{CheckedAt: ep.CheckedAt}
	var errs []string
	if ep.ResolveError != "" {
		errs = append(errs, "resolve: "+ep.ResolveError)
	}
	seen := map[uint32]int{} // AS number → index in out.ASNs
	for _, ip := range ep.IPs {
		out.IPs = append(out.IPs, ip.IP)
		switch {
		case ip.ASN != nil:
			text := fmt.Sprintf("AS%d", ip.ASN.Number)
			if ip.ASN.Name != "" {
				text += " " + ip.ASN.Name
			}
			if i, ok := seen[ip.ASN.Number]; !ok {
				seen[ip.ASN.Number] = len(out.ASNs)
				out.ASNs = append(out.ASNs, text)
			} else if len(text) > len(out.ASNs[i]) {
				out.ASNs[i] = text // one lookup may have the AS name, another not
			}
		case ip.ASNError != "":
			if !slices.Contains(out.ASNs, "unknown") {
				out.ASNs = append(out.ASNs, "unknown")
			}
		}
	}
	if t := ep.TLS; t != nil {
		out.TLSIssuer = issuerText(t.IssuerOrg, t.IssuerCN)
		out.TLSFingerprint = t.LeafFingerprint
		if t.Error != "" {
			errs = append(errs, "tls: "+t.Error)
		}
	}
	out.Error = strings.Join(errs, "; ")
	return out
}

func issuerText(org, cn string) string {
	var parts []string
	if org != "" {
		parts = append(parts, "O="+org)
	}
	if cn != "" {
		parts = append(parts, "CN="+cn)
	}
	return strings.Join(parts, ", ")
}
