package realsuite

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The names and addresses ctrld contacts, all served on the namespace's
// loopback: its API and the DoH resolver the API's answer names, by name
// and by the fallback IPs ctrld dials when the name does not resolve.
const (
	apiHost = "api.controld.com"
	dohHost = "dns.controld.com"
)

var (
	// Control D's DNS servers, which ctrld dials to check that the network
	// is up and to resolve its API's name (1.2.1: 76.76.2.0; later
	// 76.76.2.22): on lo, and served by the fake, they stay on loopback.
	BootstrapAddrs = []string{"76.76.2.0", "76.76.2.11", "76.76.2.22", "2606:1a40::11", "2606:1a40::22", "2606:1a40:f000::11", "2606:1a40:f000::22"}
	// ctrld's API fallback, which it also verifies the certificate against.
	APIFallbackAddrs = []string{"147.185.34.1", "2606:1a40:3::1"}
	// ResolvConfAddr is the nameserver /etc/resolv.conf names: on
	// loopback, but not 127.0.0.1, whose port 53 is ctrld's listener.
	ResolvConfAddr = "127.0.0.2"
)

// Fake is a Control D of the suite's own: the API's resolver endpoint, a
// DoH resolver and a plain DNS server that sends every name to loopback.
type Fake struct {
	CAPEM []byte // the CA that issued the fake's certificate

	resolvers map[string]bool   // resolver IDs the API knows
	tokens    map[string]string // provisioning token → resolver ID

	dohDelay  atomic.Int64 // nanoseconds each DoH answer waits
	dohRefuse atomic.Bool

	closers []io.Closer
	wg      sync.WaitGroup
}

// StartFake serves the fake on this namespace's loopback. The caller has
// put BootstrapAddrs and APIFallbackAddrs on lo.
func StartFake(resolvers []string, tokens map[string]string) (*Fake, error) {
	f := &Fake{resolvers: map[string]bool{}, tokens: tokens}
	for _, r := range resolvers {
		f.resolvers[r] = true
	}
	cert, err := f.issue()
	if err != nil {
		return nil, err
	}
	dnsAddrs := append([]string{ResolvConfAddr}, BootstrapAddrs...)
	for _, a := range dnsAddrs {
		if err := f.serveDNS(net.JoinHostPort(a, "53")); err != nil {
			f.Close()
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", ":443")
	if err != nil {
		f.Close()
		return nil, err
	}
	srv := &http.Server{
		Handler:           f,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 10 * time.Second,
		// ctrld's happy-eyeballs dialling abandons handshakes: not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	f.closers = append(f.closers, srv)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		_ = srv.ServeTLS(ln, "", "")
	}()
	return f, nil
}

// SetDoHDelay makes every later DoH answer wait d: a slow upstream.
func (f *Fake) SetDoHDelay(d time.Duration) { f.dohDelay.Store(int64(d)) }

// SetDoHRefused makes the DoH resolver answer every question with an
// HTTP error: an upstream that refuses.
func (f *Fake) SetDoHRefused(refuse bool) { f.dohRefuse.Store(refuse) }

// Close stops every server and waits for their goroutines.
func (f *Fake) Close() {
	for _, c := range f.closers {
		_ = c.Close()
	}
	f.wg.Wait()
}

// issue makes a CA and a certificate for every name and address ctrld may
// ask, valid for the test's lifetime only.
func (f *Fake) issue() (tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "ctrld-install realsuite test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	ca, err = x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: apiHost},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{apiHost, dohHost, "*.controld.com"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, a := range append(append([]string{}, APIFallbackAddrs...), BootstrapAddrs...) {
		leaf.IPAddresses = append(leaf.IPAddresses, net.ParseIP(a))
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	f.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}, nil
}

// loopbackFor is the address every name resolves to.
func loopbackFor(qtype uint16) netip.Addr {
	if qtype == typeAAAA {
		return netip.IPv6Loopback()
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

func (f *Fake) serveDNS(addr string) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	f.closers = append(f.closers, pc)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	f.closers = append(f.closers, ln)
	f.wg.Add(2)
	go func() {
		defer f.wg.Done()
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if q, err := parseQuestion(buf[:n]); err == nil {
				_, _ = pc.WriteTo(answer(buf[:n], q, loopbackFor(q.qtype)), from)
			}
		}
	}()
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveDNSConn(c)
		}
	}()
	return nil
}

// serveDNSConn answers length-prefixed queries on one TCP connection.
func serveDNSConn(c net.Conn) {
	defer c.Close()
	for {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return
		}
		msg := make([]byte, int(l[0])<<8|int(l[1]))
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		q, err := parseQuestion(msg)
		if err != nil {
			return
		}
		resp := answer(msg, q, loopbackFor(q.qtype))
		if _, err := c.Write(append([]byte{byte(len(resp) >> 8), byte(len(resp))}, resp...)); err != nil {
			return
		}
	}
}

// ServeHTTP is the API (POST /utility, /logs) and the DoH resolver (any
// other path: ctrld asks /<resolver ID>).
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/utility":
		f.utility(w, r)
	case "/logs":
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	default:
		f.doh(w, r)
	}
}

type apiResolver struct {
	DOH   string `json:"doh"`
	Ctrld struct {
		CustomConfig     string `json:"custom_config"`
		CustomLastUpdate int64  `json:"custom_last_update"`
		VersionTarget    string `json:"version_target"`
	} `json:"ctrld"`
	Exclude []string `json:"exclude"`
	UID     string   `json:"uid"`
}

// utility answers ctrld's resolver request: by resolver ID ("uid") or by
// provisioning token ("prov_token"), as ctrld's internal/controld sends them.
func (f *Fake) utility(w http.ResponseWriter, r *http.Request) {
	var req struct {
		UID       string `json:"uid"`
		ProvToken string `json:"prov_token"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req) != nil {
		apiError(w, http.StatusBadRequest, "Bad request", 40000)
		return
	}
	uid := req.UID
	if req.ProvToken != "" {
		var ok bool
		if uid, ok = f.tokens[req.ProvToken]; !ok {
			apiError(w, http.StatusBadRequest, "Invalid provision token", 40401)
			return
		}
	}
	uid, _, _ = strings.Cut(uid, "/")
	if !f.resolvers[uid] {
		// What Control D answers for a resolver it does not know.
		apiError(w, http.StatusNotFound, "Device does not exist", 40402)
		return
	}
	var res apiResolver
	res.DOH = "https://" + dohHost + "/" + uid
	res.Exclude = []string{"excluded.canary.test"}
	res.UID = uid
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "body": map[string]any{"resolver": res}})
}

func apiError(w http.ResponseWriter, status int, msg string, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"success": false, "error": map[string]any{"message": msg, "code": code}})
}

// doh answers RFC 8484 GET and POST queries, late or not at all when told.
func (f *Fake) doh(w http.ResponseWriter, r *http.Request) {
	var msg []byte
	var err error
	switch r.Method {
	case http.MethodGet:
		msg, err = base64.RawURLEncoding.DecodeString(r.URL.Query().Get("dns"))
	case http.MethodPost:
		msg, err = io.ReadAll(io.LimitReader(r.Body, 65535))
	default:
		err = errors.New("method")
	}
	q, perr := parseQuestion(msg)
	if err != nil || perr != nil {
		http.Error(w, "bad query", http.StatusBadRequest)
		return
	}
	if d := time.Duration(f.dohDelay.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if f.dohRefuse.Load() {
		http.Error(w, "refused", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/dns-message")
	_, _ = w.Write(answer(msg, q, loopbackFor(q.qtype)))
}

// Ask sends one question over UDP to addr and waits at most timeout.
func Ask(ctx context.Context, addr, name string, qtype uint16, timeout time.Duration) (rcode int, addrs []netip.Addr, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return 0, nil, err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	id := uint16(time.Now().UnixNano())
	if _, err := c.Write(newQuery(id, name, qtype)); err != nil {
		return 0, nil, err
	}
	buf := make([]byte, 1500)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return 0, nil, err
		}
		if r, err := parseReply(buf[:n], id); err == nil {
			return r.rcode, r.addrs, nil
		}
	}
}
