package driver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/server"
	"github.com/folio-db/folio/tests/testcerts"
)

// x509Subject is the test client certificate's subject as MongoDB names
// its $external user (RFC 2253: the last RDN first).
const x509Subject = "CN=client,OU=KernelUser,O=MongoDB,L=New York City,ST=New York,C=US"

// x509Client connects over TLS presenting cert (nil: none) with cred (nil:
// no authentication) through one connection, so that a command's
// authentication holds for the next; it does not ping.
func x509Client(t *testing.T, in *instance.Instance, roots *x509.CertPool, cert *tls.Certificate, cred *options.Credential) *mongo.Client {
	t.Helper()
	conf := &tls.Config{RootCAs: roots}
	if cert != nil {
		conf.Certificates = []tls.Certificate{*cert}
	}
	o := uriOptions(in.URI()).SetDirect(true).SetTLSConfig(conf).SetMaxPoolSize(1).
		SetServerSelectionTimeout(2 * time.Second).SetConnectTimeout(2 * time.Second)
	if cred != nil {
		o.SetAuth(*cred)
	}
	c, err := mongo.Connect(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

func keyPair(t *testing.T, pemData []byte) *tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(pemData, pemData)
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

// startX509Instance starts a server under access control that takes TLS,
// with or without a client certificate, from a test CA, enabling the
// authentication mechanisms mechs (nil: the default); it returns the CA,
// whose clients' certificates the server verifies, and the roots that
// verify the server's.
func startX509Instance(t *testing.T, mechs []string) (*instance.Instance, *testcerts.CA, *x509.CertPool) {
	t.Helper()
	dir := t.TempDir()
	ca := testcerts.NewCA(t, "folio test CA")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	cfg := defaultConfig()
	cfg.Auth = true
	cfg.AuthenticationMechanisms = mechs
	cfg.TLS = server.TLSOptions{
		Mode: server.TLSAllow, CertificateKeyFile: testcerts.Write(t, dir, "server.pem", ca.Server(t)),
		CAFile: testcerts.Write(t, dir, "ca.pem", ca.PEM), AllowConnectionsWithoutCertificates: true,
	}
	return startInstance(t, cfg), ca, roots
}

// TestX509Auth authenticates clients by their certificates as MongoDB's
// MONGODB-X509 mechanism does (manual, "Use x.509 Certificates to
// Authenticate Clients"): the user is created on $external under the
// certificate's subject, without a password; authenticate on $external
// (or hello's speculativeAuthenticate) logs the connection in when it
// presented a verified certificate with that subject, and the user's
// roles then apply.
// https://www.mongodb.com/docs/v7.0/tutorial/configure-x509-client-authentication/
func TestX509Auth(t *testing.T) {
	in, ca, roots := startX509Instance(t, nil)
	createRootUser(t, in)
	root := connectAs(t, in, rootUser, rootPassword, "admin", "")
	cert := keyPair(t, ca.ClientSubject(t, pkix.Name{
		Country: []string{"US"}, Province: []string{"New York"}, Locality: []string{"New York City"},
		Organization: []string{"MongoDB"}, OrganizationalUnit: []string{"KernelUser"}, CommonName: "client",
	}))
	stranger := keyPair(t, ca.Client(t, "nobody"))

	// A password is refused on $external; the user has external credentials.
	_, err := runCmd(root, "$external", bson.D{{Key: "createUser", Value: x509Subject}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}})
	if serverCode(err) != 2 || !strings.Contains(err.Error(), "Cannot set the password for users defined on the '$external' database") {
		t.Fatalf("createUser with pwd on $external: %v, want BadValue", err)
	}
	if _, err := runCmd(root, "$external", bson.D{{Key: "createUser", Value: x509Subject},
		{Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "readWrite"}, {Key: "db", Value: "x509db"}}}}}); err != nil {
		t.Fatalf("createUser: %v", err)
	}
	_, err = runCmd(root, "$external", bson.D{{Key: "updateUser", Value: x509Subject}, {Key: "pwd", Value: "pw"}})
	if serverCode(err) != 2 {
		t.Fatalf("updateUser with pwd on $external: %v, want BadValue", err)
	}
	info, err := runCmd(root, "$external", bson.D{{Key: "usersInfo", Value: x509Subject}, {Key: "showCredentials", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	u := info.Lookup("users", "0").Document()
	if got := u.Lookup("credentials").String(); got != `{"external": true}` {
		t.Errorf("credentials %s, want {external: true}", got)
	}
	if got := u.Lookup("mechanisms").String(); got != `["external"]` {
		t.Errorf("mechanisms %s, want [\"external\"]", got)
	}

	// The driver's MONGODB-X509 (speculative in its handshake; the Go
	// driver never names the user).
	{
		c := x509Client(t, in, roots, cert, &options.Credential{AuthMechanism: "MONGODB-X509"})
		if _, err := c.Database("x509db").Collection("c").InsertOne(context.Background(), bson.D{{Key: "a", Value: 1}}); err != nil {
			t.Fatalf("insert: %v", err)
		}
		if _, err := c.Database("other").Collection("c").InsertOne(context.Background(), bson.D{{Key: "a", Value: 1}}); serverCode(err) != 13 {
			t.Errorf("insert outside the user's roles: %v, want Unauthorized", err)
		}
		st, err := runCmd(c, "admin", bson.D{{Key: "connectionStatus", Value: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Lookup("authInfo", "authenticatedUsers").String(); got != `[{"user": "`+x509Subject+`","db": "$external"}]` {
			t.Errorf("authenticated users %s", got)
		}
	}

	// Refusals through the driver.
	refused := []struct {
		name string
		cert *tls.Certificate
		want string
	}{
		{"no certificate", nil, "AuthenticationFailed"},
		{"no such user", stranger, "UserNotFound"},
	}
	for _, r := range refused {
		c := x509Client(t, in, roots, r.cert, &options.Credential{AuthMechanism: "MONGODB-X509"})
		err := c.Ping(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: ping error %v, want %s", r.name, err, r.want)
		}
	}

	// The authenticate command itself, on one connection.
	c := x509Client(t, in, roots, cert, nil)
	cmds := []struct {
		db   string
		cmd  bson.D
		code int
	}{
		{"$external", bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}, {Key: "user", Value: "CN=x"}}, 18},
		{"admin", bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}}, 17},
		{"$external", bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}}, 0},
		{"$external", bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}, {Key: "user", Value: x509Subject}}, 0},
	}
	for _, k := range cmds {
		reply, err := runCmd(c, k.db, k.cmd)
		if serverCode(err) != k.code || (err != nil) != (k.code != 0) {
			t.Fatalf("%v on %s: %v, want code %d", k.cmd, k.db, err, k.code)
		}
		if err == nil {
			if u, d := reply.Lookup("user").StringValue(), reply.Lookup("dbname").StringValue(); u != x509Subject || d != "$external" {
				t.Errorf("authenticate reply %s", reply)
			}
		}
	}
	if _, err := c.Database("x509db").Collection("c").CountDocuments(context.Background(), bson.D{}); err != nil {
		t.Errorf("count after authenticate: %v", err)
	}

	// Without TLS there is no certificate.
	plain := anonymous(t, in)
	if _, err := runCmd(plain, "$external", bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}}); serverCode(err) != 18 {
		t.Errorf("authenticate without TLS: %v, want AuthenticationFailed", err)
	}

	// hello's speculativeAuthenticate answers {user, dbname} and logs in.
	c = x509Client(t, in, roots, cert, nil)
	reply, err := runCmd(c, "admin", bson.D{{Key: "hello", Value: 1}, {Key: "speculativeAuthenticate", Value: bson.D{
		{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}, {Key: "db", Value: "$external"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := reply.Lookup("speculativeAuthenticate").String(); got != `{"user": "`+x509Subject+`","dbname": "$external"}` {
		t.Errorf("speculativeAuthenticate %s", got)
	}
	if _, err := c.Database("x509db").Collection("c").CountDocuments(context.Background(), bson.D{}); err != nil {
		t.Errorf("count after speculative authentication: %v", err)
	}
	// saslSupportedMechs of the X.509 user names no SASL mechanism: an
	// empty list, as MongoDB answers for every user it finds
	// (advertiseMechanismNamesForUser).
	reply, err = runCmd(c, "admin", bson.D{{Key: "hello", Value: 1}, {Key: "saslSupportedMechs", Value: "$external." + x509Subject}})
	if err != nil {
		t.Fatal(err)
	}
	if v := reply.Lookup("saslSupportedMechs").String(); v != "[]" {
		t.Errorf("saslSupportedMechs %s for an X.509 user, want []", v)
	}
}

// TestX509Disabled: with MONGODB-X509 left out of authenticationMechanisms
// a verified certificate's user is refused as MongoDB refuses it, after
// the certificate and database checks: BadValue "x.509 authentication is
// disabled." (its speculative form answers nothing); MongoDB still counts
// the mechanism, so it is not MechanismUnavailable.
func TestX509Disabled(t *testing.T) {
	in, ca, roots := startX509Instance(t, []string{"SCRAM-SHA-1", "SCRAM-SHA-256"})
	createRootUser(t, in)
	root := connectAs(t, in, rootUser, rootPassword, "admin", "")
	if _, err := runCmd(root, "$external", bson.D{{Key: "createUser", Value: "CN=client"}, {Key: "roles", Value: bson.A{}}}); err != nil {
		t.Fatal(err)
	}
	cert := keyPair(t, ca.Client(t, "client"))
	c := x509Client(t, in, roots, cert, nil)
	for _, k := range []struct {
		db       string
		cmd      bson.D
		code     int
		codeName string
		msg      string
	}{
		{"admin", bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}}, 17, "ProtocolError", "X.509 authentication must always use the $external database."},
		{"$external", bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}}, 2, "BadValue", "x.509 authentication is disabled."},
	} {
		_, err := runCmd(c, k.db, k.cmd)
		requireError(t, err, k.code, k.codeName, k.msg)
	}
	reply, err := runCmd(c, "admin", bson.D{{Key: "hello", Value: 1}, {Key: "speculativeAuthenticate", Value: bson.D{
		{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}, {Key: "db", Value: "$external"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := reply.LookupErr("speculativeAuthenticate"); err == nil {
		t.Errorf("speculativeAuthenticate %s with MONGODB-X509 disabled", v)
	}
}
