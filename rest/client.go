package rest

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddress names the client of a request for the limits kept per address.
// The client is the address that connected (RemoteAddr), unless that address is
// a trusted proxy: then it is the nearest address of X-Forwarded-For, read from
// the right, that is not a trusted proxy itself (the ones further left were
// written by whoever sent the request, and may be anything). An IPv6 client is
// named by its /64, the block one host is usually given.
type clientAddress struct {
	trusted []netip.Prefix
}

// of returns r's client, as an address or IPv6 prefix.
func (c clientAddress) of(r *http.Request) string {
	addr, ok := parseAddr(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr // not an IP (a test's pipe): itself
	}
	if c.isTrusted(addr) {
		hops := r.Header.Values("X-Forwarded-For")
		for i := len(hops) - 1; i >= 0; i-- {
			list := strings.Split(hops[i], ",")
			for j := len(list) - 1; j >= 0; j-- {
				hop, ok := parseAddr(strings.TrimSpace(list[j]))
				if !ok {
					return name(addr) // a hop that is not an address: stop at the last one believed
				}
				addr = hop
				if !c.isTrusted(hop) {
					return name(addr)
				}
			}
		}
	}
	return name(addr)
}

func (c clientAddress) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseAddr reads an address with or without a port ("192.0.2.1:5000",
// "[2001:db8::1]:443", "2001:db8::1").
func parseAddr(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// name is how the limits key an address: IPv4 whole, IPv6 by its /64.
func name(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
