package driver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/server"
)

// testCA is a throwaway certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf certificate for usage and returns it with its key as
// one PEM (certificate first), the form -tls-certificate-key-file takes.
func (ca *testCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})...)
}

// writeFile writes data under dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// pingWith connects to in with tlsConf (nil: no TLS) and reports the
// ping's error.
func pingWith(t *testing.T, in *instance.Instance, tlsConf *tls.Config) error {
	t.Helper()
	opts := options.Client().ApplyURI(in.URI()).SetDirect(true).SetServerSelectionTimeout(2 * time.Second).SetConnectTimeout(2 * time.Second)
	if tlsConf != nil {
		opts.SetTLSConfig(tlsConf)
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	return client.Ping(context.Background(), nil)
}

// TestTLS serves clients over TLS as mongod's net.tls options do (MongoDB
// manual, Configure mongod and mongos for TLS/SSL): requireTLS closes plain
// connections, allowTLS and preferTLS serve both, a CA file makes client
// certificates required unless connections without them are allowed, and
// a certificate presented is verified.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "folio test CA")
	other := newTestCA(t, "someone else's CA")
	caFile := writeFile(t, dir, "ca.pem", ca.pem)
	serverPEM := writeFile(t, dir, "server.pem", ca.issue(t, "localhost", x509.ExtKeyUsageServerAuth))
	clientPair := ca.issue(t, "client", x509.ExtKeyUsageClientAuth)
	clientCert, err := tls.X509KeyPair(clientPair, clientPair)
	if err != nil {
		t.Fatal(err)
	}
	strangerPair := other.issue(t, "stranger", x509.ExtKeyUsageClientAuth)
	stranger, err := tls.X509KeyPair(strangerPair, strangerPair)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.pem)
	anon := &tls.Config{RootCAs: roots}
	withCert := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{clientCert}}
	// Go's client sends only a certificate the server's CAs vouch for,
	// unless told which to send.
	withStranger := &tls.Config{RootCAs: roots, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return &stranger, nil
	}}

	type client struct {
		name string
		conf *tls.Config
		ok   bool
	}
	cases := []struct {
		mode    server.TLSMode
		noCerts bool
		clients []client
	}{
		{server.TLSRequire, true, []client{{"plain", nil, false}, {"TLS", anon, true}, {"TLS with a certificate", withCert, true}, {"TLS with a stranger's certificate", withStranger, false}}},
		{server.TLSRequire, false, []client{{"plain", nil, false}, {"TLS", anon, false}, {"TLS with a certificate", withCert, true}}},
		{server.TLSAllow, true, []client{{"plain", nil, true}, {"TLS", anon, true}}},
		{server.TLSPrefer, true, []client{{"plain", nil, true}, {"TLS with a certificate", withCert, true}}},
	}
	for _, c := range cases {
		cfg := defaultConfig()
		cfg.TLS = server.TLSOptions{Mode: c.mode, CertificateKeyFile: serverPEM, CAFile: caFile, AllowConnectionsWithoutCertificates: c.noCerts}
		in := startInstance(t, cfg)
		for _, cl := range c.clients {
			err := pingWith(t, in, cl.conf)
			if (err == nil) != cl.ok {
				t.Errorf("%v (connections without certificates %v), %s client: ping error %v, want success %v", c.mode, c.noCerts, cl.name, err, cl.ok)
			}
		}
	}
}

// TestTLSStartupChecks refuses the TLS setups mongod refuses at startup.
func TestTLSStartupChecks(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "folio test CA")
	caFile := writeFile(t, dir, "ca.pem", ca.pem)
	serverPEM := writeFile(t, dir, "server.pem", ca.issue(t, "localhost", x509.ExtKeyUsageServerAuth))
	certOnly := writeFile(t, dir, "cert-only.pem", ca.pem)
	cases := []struct {
		name string
		opts server.TLSOptions
	}{
		{"options without a TLS mode", server.TLSOptions{CertificateKeyFile: serverPEM, CAFile: caFile}},
		{"no certificate", server.TLSOptions{Mode: server.TLSRequire, CAFile: caFile}},
		{"no CA file", server.TLSOptions{Mode: server.TLSRequire, CertificateKeyFile: serverPEM}},
		{"no key in the PEM", server.TLSOptions{Mode: server.TLSRequire, CertificateKeyFile: certOnly, CAFile: caFile}},
		{"missing CA file", server.TLSOptions{Mode: server.TLSPrefer, CertificateKeyFile: serverPEM, CAFile: filepath.Join(dir, "none.pem")}},
	}
	for _, c := range cases {
		cfg := defaultConfig()
		cfg.TLS = c.opts
		if in, err := instance.Start(cfg); err == nil {
			in.Close(context.Background())
			t.Errorf("%s: started", c.name)
		}
	}
}
