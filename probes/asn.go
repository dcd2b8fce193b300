package probes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/oschwald/maxminddb-golang"

	"github.com/rpcdash/rpcdash/engine"
)

type asnResult struct {
	asn ASN
	err error
}

// asnSource maps public addresses to the AS that announces them.
type asnSource interface {
	lookup(ctx context.Context, addrs []netip.Addr) map[netip.Addr]asnResult
}

const asnParallelism = 4

// cymruSource asks Team Cymru's IP-to-ASN DNS interface: one origin query per
// address, then one name query per distinct AS number.
type cymruSource struct{ dns dnsClient }

func (s *cymruSource) lookup(ctx context.Context, addrs []netip.Addr) map[netip.Addr]asnResult {
	results := make([]asnResult, len(addrs))
	forEach(len(addrs), asnParallelism, func(i int) {
		results[i] = s.origin(ctx, addrs[i])
	})

	var numbers []uint32
	for _, r := range results {
		if r.err == nil && !slices.Contains(numbers, r.asn.Number) {
			numbers = append(numbers, r.asn.Number)
		}
	}
	names := make([]string, len(numbers))
	forEach(len(numbers), asnParallelism, func(i int) {
		names[i] = s.name(ctx, numbers[i])
	})

	out := make(map[netip.Addr]asnResult, len(addrs))
	for i, a := range addrs {
		r := results[i]
		if r.err == nil {
			r.asn.Name = names[slices.Index(numbers, r.asn.Number)]
		}
		out[a] = r
	}
	return out
}

func (s *cymruSource) origin(ctx context.Context, a netip.Addr) asnResult {
	txt, err := s.dns.lookupTXT(ctx, cymruOriginName(a))
	switch {
	case errors.Is(err, errNotFound):
		return asnResult{err: errors.New("no origin AS announced for this address")}
	case err != nil:
		return asnResult{err: fmt.Errorf("lookup failed: %v", err)}
	}
	asn, err := parseCymruOrigin(txt)
	if err != nil {
		return asnResult{err: fmt.Errorf("lookup failed: %v", err)}
	}
	return asnResult{asn: asn}
}

// name is best effort: an AS known by number but not by name still groups.
func (s *cymruSource) name(ctx context.Context, number uint32) string {
	txt, err := s.dns.lookupTXT(ctx, fmt.Sprintf("AS%d.asn.cymru.com", number))
	if err != nil {
		return ""
	}
	return parseCymruName(txt)
}

// cymruOriginName is d.c.b.a.origin.asn.cymru.com for IPv4 and the
// nibble-reversed address under origin6.asn.cymru.com for IPv6.
func cymruOriginName(a netip.Addr) string {
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return fmt.Sprintf("%d.%d.%d.%d.origin.asn.cymru.com", b[3], b[2], b[1], b[0])
	}
	b := a.As16()
	var sb strings.Builder
	for i := len(b) - 1; i >= 0; i-- {
		fmt.Fprintf(&sb, "%x.%x.", b[i]&0x0f, b[i]>>4)
	}
	sb.WriteString("origin6.asn.cymru.com")
	return sb.String()
}

// parseCymruOrigin reads "13335 | 104.16.0.0/12 | US | arin | 2014-03-28".
// When several records come back the most specific prefix wins; when the
// first field lists several origin ASNs the first is taken.
func parseCymruOrigin(records []string) (ASN, error) {
	var best ASN
	bestBits := -1
	for _, rec := range records {
		f := splitCymru(rec)
		if len(f) < 2 {
			continue
		}
		numbers := strings.Fields(f[0])
		if len(numbers) == 0 {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToUpper(numbers[0]), "AS"), 10, 32)
		if err != nil {
			continue
		}
		bits := 0
		if p, err := netip.ParsePrefix(f[1]); err == nil {
			bits = p.Bits()
		}
		if bits <= bestBits {
			continue
		}
		bestBits = bits
		best = ASN{Number: uint32(n), Prefix: f[1]}
		if len(f) > 2 {
			best.Country = f[2]
		}
	}
	if bestBits < 0 {
		return ASN{}, errors.New("unreadable Team Cymru origin record")
	}
	return best, nil
}

// parseCymruName reads "13335 | US | arin | 2010-07-14 | CLOUDFLARENET - Cloudflare, Inc., US"
// and drops the trailing country code.
func parseCymruName(records []string) string {
	for _, rec := range records {
		f := splitCymru(rec)
		if len(f) < 5 || f[4] == "" {
			continue
		}
		name := f[4]
		if cc := f[1]; cc != "" {
			name = strings.TrimSuffix(name, ", "+cc)
		}
		return name
	}
	return ""
}

func splitCymru(rec string) []string {
	f := strings.Split(rec, "|")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

// dbSource reads a MaxMind-format ASN database (GeoLite2-ASN layout) held in
// memory, so a Checker needs no Close.
type dbSource struct{ r *maxminddb.Reader }

func openASNDB(path string) (*dbSource, error) {
	if path == "" {
		return nil, errors.New("probes: asn mode db needs an asn_db path")
	}
	r, err := readASNDB(path)
	if err != nil {
		return nil, fmt.Errorf("probes: asn_db: %w", err)
	}
	return &dbSource{r: r}, nil
}

// readASNDB reads a MaxMind DB whole. Its errors show the path as config
// values are shown (probes.asn_db may hold a misplaced endpoint URL).
func readASNDB(path string) (*maxminddb.Reader, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path, again, without redaction
		}
		return nil, fmt.Errorf("cannot read %s: %w", engine.ShowConfigValue(path), err)
	}
	r, err := maxminddb.FromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("%s is not a MaxMind DB: %w", engine.ShowConfigValue(path), err)
	}
	return r, nil
}

type mmdbASNRecord struct {
	Number uint32 `maxminddb:"autonomous_system_number"`
	Org    string `maxminddb:"autonomous_system_organization"`
}

func (s *dbSource) lookup(_ context.Context, addrs []netip.Addr) map[netip.Addr]asnResult {
	out := make(map[netip.Addr]asnResult, len(addrs))
	for _, a := range addrs {
		out[a] = s.one(a)
	}
	return out
}

func (s *dbSource) one(a netip.Addr) asnResult {
	var rec mmdbASNRecord
	network, ok, err := s.r.LookupNetwork(net.IP(a.AsSlice()), &rec)
	switch {
	case err != nil:
		return asnResult{err: fmt.Errorf("lookup failed: %v", err)}
	case !ok:
		return asnResult{err: errors.New("address not in the ASN database")}
	case rec.Number == 0:
		return asnResult{err: errors.New("ASN database record has no AS number")}
	}
	return asnResult{asn: ASN{Number: rec.Number, Name: rec.Org, Prefix: network.String()}}
}
