package probes

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"testing"
)

// mmdbASN is one network of a test ASN database.
type mmdbASN struct {
	prefix string
	asn    uint32
	org    string
}

// writeTestMMDB builds a small MaxMind DB (IPv6 tree, 24-bit records, IPv4
// under ::/96) in the GeoLite2-ASN layout, so the db mode is tested against
// the real reader without shipping a database.
func writeTestMMDB(t *testing.T, entries []mmdbASN) []byte {
	t.Helper()
	type node struct {
		child [2]*node
		data  int // index into entries of a leaf, -1 for an inner node
	}
	root := &node{data: -1}
	for i, e := range entries {
		p := netip.MustParsePrefix(e.prefix)
		addr, bits := p.Addr().As16(), p.Bits()
		if p.Addr().Is4() {
			addr = [16]byte{}
			v4 := p.Addr().As4()
			copy(addr[12:], v4[:])
			bits += 96
		}
		n := root
		for b := range bits {
			bit := addr[b/8] >> (7 - b%8) & 1
			if n.child[bit] == nil {
				n.child[bit] = &node{data: -1}
			}
			n = n.child[bit]
		}
		n.data = i
	}

	// Number inner nodes breadth first; leaves become data pointers.
	var inner []*node
	index := map[*node]int{}
	for queue := []*node{root}; len(queue) > 0; queue = queue[1:] {
		n := queue[0]
		index[n] = len(inner)
		inner = append(inner, n)
		for _, c := range n.child {
			if c != nil && c.data < 0 {
				queue = append(queue, c)
			}
		}
	}

	var data []byte
	offsets := make([]int, len(entries))
	for i, e := range entries {
		offsets[i] = len(data)
		data = append(data, mmdbMap(
			mmdbString("autonomous_system_number"), mmdbUint(6, uint64(e.asn)),
			mmdbString("autonomous_system_organization"), mmdbString(e.org),
		)...)
	}

	nodeCount := len(inner)
	record := func(c *node) int {
		switch {
		case c == nil:
			return nodeCount
		case c.data >= 0:
			return nodeCount + 16 + offsets[c.data]
		default:
			return index[c]
		}
	}
	var out []byte
	for _, n := range inner {
		for _, c := range n.child {
			r := record(c)
			out = append(out, byte(r>>16), byte(r>>8), byte(r))
		}
	}
	out = append(out, make([]byte, 16)...)
	out = append(out, data...)
	out = append(out, "\xAB\xCD\xEFMaxMind.com"...)
	out = append(out, mmdbMap(
		mmdbString("binary_format_major_version"), mmdbUint(5, 2),
		mmdbString("binary_format_minor_version"), mmdbUint(5, 0),
		mmdbString("build_epoch"), mmdbUint(9, 1700000000),
		mmdbString("database_type"), mmdbString("Test-ASN"),
		mmdbString("ip_version"), mmdbUint(5, 6),
		mmdbString("node_count"), mmdbUint(6, uint64(nodeCount)),
		mmdbString("record_size"), mmdbUint(5, 24),
	)...)
	return out
}

// mmdbControl encodes a control byte (and extended type and size bytes) for
// sizes below 285.
func mmdbControl(typ, size int) []byte {
	var extra []byte
	if size >= 29 {
		extra = []byte{byte(size - 29)}
		size = 29
	}
	if typ <= 7 {
		return append([]byte{byte(typ<<5 | size)}, extra...)
	}
	return append([]byte{byte(size), byte(typ - 7)}, extra...)
}

func mmdbString(s string) []byte {
	return append(mmdbControl(2, len(s)), s...)
}

// mmdbUint encodes v as type typ (5 uint16, 6 uint32, 9 uint64) in as few
// bytes as it needs.
func mmdbUint(typ int, v uint64) []byte {
	b := binary.BigEndian.AppendUint64(nil, v)
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	return append(mmdbControl(typ, len(b)), b...)
}

func mmdbMap(kv ...[]byte) []byte {
	return append(mmdbControl(7, len(kv)/2), slices.Concat(kv...)...)
}
