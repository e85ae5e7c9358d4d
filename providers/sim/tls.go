package sim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"
)

// certAuthority is the CA made at Start. Every BMC address gets its own leaf
// certificate (IP SAN), made on its first TLS handshake and cached: a
// 10,000-BMC fleet pays only for the BMCs clients talk to.
type certAuthority struct {
	cert  *x509.Certificate
	key   *ecdsa.PrivateKey
	leaf  *ecdsa.PrivateKey // one key shared by the leaves; each has its own certificate
	caPEM []byte
	now   time.Time

	mu     sync.Mutex
	serial int64
	byIP   map[string]*tls.Certificate
}

func newCertAuthority(now time.Time) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// Each CA has a name of its own: a client trusting the CAs of several
	// simulators (a sharded fleet) tries as a parent every CA of the name
	// a certificate's issuer has, a signature check each (at 13 CAs of
	// one name, a quarter of plan's CPU at 100,000 BMCs went to them).
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("rackform sim CA %x", id), Organization: []string{"rackform simulator"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certAuthority{
		cert: cert, key: key, leaf: leaf, now: now, serial: 1,
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		byIP:  map[string]*tls.Certificate{},
	}, nil
}

// certificate serves the leaf for the address the client connected to.
func (ca *certAuthority) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if hello.Conn == nil {
		return nil, errors.New("no connection")
	}
	host, _, err := net.SplitHostPort(hello.Conn.LocalAddr().String())
	if err != nil {
		return nil, err
	}
	return ca.leafFor(host)
}

// leafFor is the leaf certificate for host, made on first use.
func (ca *certAuthority) leafFor(host string) (*tls.Certificate, error) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if c, ok := ca.byIP[host]; ok {
		return c, nil
	}
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: host, Organization: []string{"rackform simulator"}},
		NotBefore:    ca.now.Add(-time.Hour),
		NotAfter:     ca.now.Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP(host)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &ca.leaf.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("certificate for %s: %w", host, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: ca.leaf}
	ca.byIP[host] = c
	return c, nil
}
