package probes

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// fakeDNS is an authoritative-looking DNS server on 127.0.0.1 (UDP, and TCP
// on the same port) answering from an in-memory zone. Names not in the zone
// get NXDOMAIN; names in the zone without the asked type get an empty answer.
type fakeDNS struct {
	addr string

	mu          sync.Mutex
	records     map[string][]dns.RR // "fqdn/TYPE"
	names       map[string]bool
	rcodes      map[string]int // "fqdn/TYPE" → rcode to answer with
	drop        map[string]bool
	truncateUDP bool
	queries     []string // "fqdn/TYPE/net"
}

func startFakeDNS(t *testing.T) *fakeDNS {
	t.Helper()
	f := &fakeDNS{records: map[string][]dns.RR{}, names: map[string]bool{}, rcodes: map[string]int{}, drop: map[string]bool{}}
	pc, l := listenUDPAndTCP(t)
	f.addr = pc.LocalAddr().String()
	servers := []*dns.Server{{PacketConn: pc, Handler: f}, {Listener: l, Handler: f}}
	for _, srv := range servers {
		started := make(chan struct{})
		done := make(chan error, 1)
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { done <- srv.ActivateAndServe() }()
		select {
		case <-started:
		case err := <-done:
			t.Fatalf("dns server: %v", err)
		}
		t.Cleanup(func() {
			if err := srv.Shutdown(); err != nil {
				t.Errorf("dns shutdown: %v", err)
			}
			<-done
		})
	}
	return f
}

// listenUDPAndTCP binds UDP and TCP on one loopback port, as a DNS server
// needs for truncated answers.
func listenUDPAndTCP(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l
		}
		pc.Close()
	}
	t.Fatal("no loopback port free for both UDP and TCP")
	return nil, nil
}

func key(name string, qtype uint16) string {
	return strings.ToLower(dns.Fqdn(name)) + "/" + dns.TypeToString[qtype]
}

func (f *fakeDNS) add(rr dns.RR) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := rr.Header()
	f.records[key(h.Name, h.Rrtype)] = append(f.records[key(h.Name, h.Rrtype)], rr)
	f.names[strings.ToLower(h.Name)] = true
}

func (f *fakeDNS) a(name string, ips ...string) {
	for _, ip := range ips {
		f.add(&dns.A{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP(ip)})
	}
}

func (f *fakeDNS) aaaa(name string, ips ...string) {
	for _, ip := range ips {
		f.add(&dns.AAAA{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: 60}, AAAA: net.ParseIP(ip)})
	}
}

func (f *fakeDNS) txt(name string, texts ...string) {
	for _, s := range texts {
		f.add(&dns.TXT{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{s}})
	}
}

func (f *fakeDNS) rcode(name string, qtype uint16, rcode int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rcodes[key(name, qtype)] = rcode
}

func (f *fakeDNS) setTruncateUDP(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.truncateUDP = on
}

// silence makes the server never answer name/qtype.
func (f *fakeDNS) silence(name string, qtype uint16) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drop[key(name, qtype)] = true
}

// cymru publishes a Team Cymru origin record for ip.
func (f *fakeDNS) cymru(t *testing.T, ip, record string) {
	t.Helper()
	f.txt(cymruOriginName(mustAddr(t, ip)), record)
}

// asName publishes a Team Cymru AS description record.
func (f *fakeDNS) asName(asn uint32, cc, name string) {
	f.txt(fmt.Sprintf("AS%d.asn.cymru.com", asn), fmt.Sprintf("%d | %s | arin | 2010-07-14 | %s, %s", asn, cc, name, cc))
}

func (f *fakeDNS) count(name string, qtype uint16) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, q := range f.queries {
		if strings.HasPrefix(q, key(name, qtype)+"/") {
			n++
		}
	}
	return n
}

func (f *fakeDNS) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.queries)
}

func (f *fakeDNS) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	q := r.Question[0]
	k := key(q.Name, q.Qtype)
	network := w.LocalAddr().Network()

	f.mu.Lock()
	f.queries = append(f.queries, k+"/"+network)
	rcode, hasRcode := f.rcodes[k]
	drop := f.drop[k]
	truncate := f.truncateUDP && network == "udp"
	answer := append([]dns.RR(nil), f.records[k]...)
	known := f.names[strings.ToLower(q.Name)]
	f.mu.Unlock()

	switch {
	case drop:
		return
	case hasRcode:
		m.Rcode = rcode
	case truncate:
		m.Truncated = true
	case !known:
		m.Rcode = dns.RcodeNameError
	default:
		m.Answer = answer
	}
	_ = w.WriteMsg(m)
}
