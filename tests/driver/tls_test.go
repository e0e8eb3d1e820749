package driver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/server"
	"github.com/folio-db/folio/tests/testcerts"
)

// pingWith connects to in with tlsConf (nil: no TLS) and reports the
// ping's error.
func pingWith(t *testing.T, in *instance.Instance, tlsConf *tls.Config) error {
	t.Helper()
	opts := uriOptions(in.URI()).SetDirect(true).SetServerSelectionTimeout(2 * time.Second).SetConnectTimeout(2 * time.Second)
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
	if testAuth() {
		t.Skip("FOLIO_TEST_AUTH=1 creates the root user over a plain connection, which requireTLS refuses; this test is about the transport")
	}
	dir := t.TempDir()
	ca := testcerts.NewCA(t, "folio test CA")
	other := testcerts.NewCA(t, "someone else's CA")
	caFile := testcerts.Write(t, dir, "ca.pem", ca.PEM)
	serverPEM := testcerts.Write(t, dir, "server.pem", ca.Server(t))
	clientPair := ca.Client(t, "client")
	clientCert, err := tls.X509KeyPair(clientPair, clientPair)
	if err != nil {
		t.Fatal(err)
	}
	strangerPair := other.Client(t, "stranger")
	stranger, err := tls.X509KeyPair(strangerPair, strangerPair)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
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
	ca := testcerts.NewCA(t, "folio test CA")
	caFile := testcerts.Write(t, dir, "ca.pem", ca.PEM)
	serverPEM := testcerts.Write(t, dir, "server.pem", ca.Server(t))
	certOnly := testcerts.Write(t, dir, "cert-only.pem", ca.PEM)
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

// TestTLSRotateCertificates: rotateCertificates reads the certificate key
// file and the CA file again (MongoDB manual, rotateCertificates): new
// connections get the new server certificate and client certificates are
// verified against the new CA, a connection already open goes on, files
// that cannot be used fail the rotation with InvalidSSLConfiguration and
// leave the certificates in use, and a server without TLS has nothing to
// rotate.
func TestTLSRotateCertificates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	oldCA, newCA := testcerts.NewCA(t, "old CA"), testcerts.NewCA(t, "new CA")
	caFile := testcerts.Write(t, dir, "ca.pem", oldCA.PEM)
	serverPEM := testcerts.Write(t, dir, "server.pem", oldCA.Server(t))
	cfg := defaultConfig()
	cfg.TLS = server.TLSOptions{Mode: server.TLSPrefer, CertificateKeyFile: serverPEM, CAFile: caFile, AllowConnectionsWithoutCertificates: true}
	in := startInstance(t, cfg)
	admin := connect(t, in) // a plain connection, which preferTLS serves
	rotate := func() error {
		return admin.Database("admin").RunCommand(ctx, bson.D{{Key: "rotateCertificates", Value: 1}, {Key: "message", Value: "test rotation"}}).Err()
	}
	// trusting is a client configuration that trusts ca's server
	// certificates and presents the client certificate signed by by, if
	// any.
	trusting := func(ca, by *testcerts.CA) *tls.Config {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca.PEM)
		conf := &tls.Config{RootCAs: roots}
		if by != nil {
			pair := by.Client(t, "client")
			cert, err := tls.X509KeyPair(pair, pair)
			if err != nil {
				t.Fatal(err)
			}
			conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
		}
		return conf
	}
	check := func(when string, conf *tls.Config, ok bool) {
		t.Helper()
		if err := pingWith(t, in, conf); (err == nil) != ok {
			t.Errorf("%s: ping error %v, want success %v", when, err, ok)
		}
	}
	open, err := mongo.Connect(uriOptions(in.URI()).SetDirect(true).SetTLSConfig(trusting(oldCA, nil)).SetMaxPoolSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer open.Disconnect(ctx)
	if err := open.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}

	testcerts.Write(t, dir, "ca.pem", newCA.PEM)
	testcerts.Write(t, dir, "server.pem", newCA.Server(t))
	check("files replaced, before the rotation: a client trusting the old CA", trusting(oldCA, nil), true)
	check("files replaced, before the rotation: a client trusting the new CA", trusting(newCA, nil), false)
	if err := rotate(); err != nil {
		t.Fatal(err)
	}
	check("after the rotation: a client trusting the new CA", trusting(newCA, nil), true)
	check("after the rotation: a client trusting the old CA", trusting(oldCA, nil), false)
	check("after the rotation: a client certificate of the new CA", trusting(newCA, newCA), true)
	check("after the rotation: a client certificate of the old CA", trusting(newCA, oldCA), false)
	if err := open.Ping(ctx, nil); err != nil {
		t.Errorf("the connection opened before the rotation: %v", err)
	}

	testcerts.Write(t, dir, "server.pem", []byte("not a certificate"))
	requireCode(t, rotate(), 140, "InvalidSSLConfiguration")
	check("after a failed rotation: a client trusting the new CA", trusting(newCA, nil), true)

	plain, _ := startServer(t)
	if err := plain.Database("admin").RunCommand(ctx, bson.D{{Key: "rotateCertificates", Value: 1}}).Err(); err != nil {
		t.Errorf("rotateCertificates without TLS: %v", err)
	}
}
