// Package netguard makes outbound HTTP clients that refuse to connect to private,
// loopback, link-local, multicast and cloud-metadata addresses. The check runs on
// the address actually dialled, after DNS resolution, so a hostname that resolves
// (or re-resolves) to an internal address is refused too.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrForbiddenAddress is returned when a destination is an internal address.
var ErrForbiddenAddress = errors.New("netguard: destination address is not public")

var extraBlocked = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),     // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),      // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved
	netip.MustParsePrefix("64:ff9b::/96"),      // NAT64 (may embed private IPv4)
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64
	netip.MustParsePrefix("::/96"),             // IPv4-compatible (deprecated; embeds any IPv4)
	netip.MustParsePrefix("2002::/16"),         // 6to4 (embeds any IPv4)
	netip.MustParsePrefix("2001::/32"),         // Teredo (embeds any IPv4)
	netip.MustParsePrefix("2001:db8::/32"),     // documentation
	netip.MustParsePrefix("fec0::/10"),         // site-local (deprecated, still routed inside some networks)
	netip.MustParsePrefix("100::/64"),          // discard-only
	netip.MustParsePrefix("fd00:ec2::254/128"), // cloud metadata over IPv6
}

// IsPublic reports whether ip is a globally routable unicast address.
func IsPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() || !ip.IsGlobalUnicast() {
		return false
	}
	for _, p := range extraBlocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Control is a net.Dialer Control function that refuses non-public addresses.
func Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: %w", err)
	}
	if !IsPublic(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// Client returns an HTTP client with the given overall timeout that never follows
// redirects. Unless allowPrivate is set, it refuses non-public destinations.
func Client(timeout time.Duration, allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = Control
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// privateURL is a CheckURL refusal that allowing http and private destinations
// would lift (NeedsAllowPrivate).
type privateURL string

func (e privateURL) Error() string { return string(e) }

// NeedsAllowPrivate reports whether CheckURL refused a URL for a reason that
// allowing http and private destinations lifts (http, a private address, a name
// that does not resolve), so that the refusal can name the setting.
func NeedsAllowPrivate(err error) bool {
	var e privateURL
	return errors.As(err, &e)
}

// CheckURL validates a destination URL before it is stored: it must be absolute,
// use https (or http when allowHTTP), carry no credentials, and, unless
// allowPrivate, its host must not be or resolve to an internal address.
func CheckURL(ctx context.Context, raw string, allowHTTP, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return errors.New("must be an absolute URL")
	}
	if u.Scheme != "https" && !(allowHTTP && u.Scheme == "http") {
		return privateURL("must use https")
	}
	if u.User != nil {
		return errors.New("must not carry credentials")
	}
	if allowPrivate {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		if !IsPublic(ip) {
			return privateURL("must not point at a private, loopback or link-local address")
		}
		return nil
	}
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".internal") {
		return privateURL("must not point at a private, loopback or link-local address")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		// Refused: a name that does not resolve here may resolve to anything later
		// (a split-horizon or rebinding name), and nothing can be fetched from it now.
		return privateURL("must resolve to a public address (the host name does not resolve)")
	}
	for _, a := range addrs {
		if !IsPublic(a) {
			return privateURL("must not resolve to a private, loopback or link-local address")
		}
	}
	return nil
}
