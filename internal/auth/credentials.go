package auth

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"slices"

	"github.com/xdg-go/scram"
	"github.com/xdg-go/stringprep"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// The SCRAM mechanisms Folio serves, MongoDB's default first.
const (
	SHA256 = "SCRAM-SHA-256"
	SHA1   = "SCRAM-SHA-1"
)

// Mechanisms are the SASL mechanisms a user may have credentials for.
var Mechanisms = []string{SHA1, SHA256}

// mech describes one SCRAM mechanism: its hash, MongoDB's default
// iteration count (scramIterationCount, scramSHA256IterationCount) and
// salt length (the hash length less 4 bytes).
type mech struct {
	hash    scram.HashGeneratorFcn
	iters   int
	saltLen int
}

var mechs = map[string]mech{
	SHA1:   {hash: scram.SHA1, iters: 10000, saltLen: 16},
	SHA256: {hash: scram.SHA256, iters: 15000, saltLen: 28},
}

// Credential is one mechanism's stored SCRAM credential: never the
// password, only the salt, the iteration count and the derived keys.
type Credential struct {
	Iterations int
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
}

// Doc is the credential as MongoDB stores it: base64 strings.
func (c Credential) Doc() bson.D {
	enc := base64.StdEncoding.EncodeToString
	return bson.D{
		{Key: "iterationCount", Value: int32(c.Iterations)},
		{Key: "salt", Value: enc(c.Salt)},
		{Key: "storedKey", Value: enc(c.StoredKey)},
		{Key: "serverKey", Value: enc(c.ServerKey)},
	}
}

// ParseCredential reads a stored credential.
func ParseCredential(d bson.Raw) (Credential, error) {
	var c Credential
	n, ok := d.Lookup("iterationCount").AsInt64OK()
	if !ok || n <= 0 {
		return c, mongoerr.New(mongoerr.AuthSchemaIncompatible, "invalid SCRAM credential: iterationCount")
	}
	c.Iterations = int(n)
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{"salt", &c.Salt}, {"storedKey", &c.StoredKey}, {"serverKey", &c.ServerKey}} {
		s, ok := d.Lookup(f.name).StringValueOK()
		if !ok {
			return c, mongoerr.New(mongoerr.AuthSchemaIncompatible, "invalid SCRAM credential: %s", f.name)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return c, mongoerr.New(mongoerr.AuthSchemaIncompatible, "invalid SCRAM credential: %s", f.name)
		}
		*f.dst = b
	}
	return c, nil
}

// mechanismPassword is the string SCRAM salts and hashes for mechanism:
// for SCRAM-SHA-1, MongoDB's digest hex(md5(user:mongo:password)); for
// SCRAM-SHA-256, the password normalized by SASLprep.
func mechanismPassword(mechanism, user, password string) (string, error) {
	if mechanism == SHA1 {
		sum := md5.Sum([]byte(user + ":mongo:" + password))
		return hex.EncodeToString(sum[:]), nil
	}
	p, err := stringprep.SASLprep.Prepare(password)
	if err != nil {
		return "", mongoerr.New(mongoerr.BadValue, "Error preflighting password: invalid SASLprep input")
	}
	return p, nil
}

// NewCredential salts and hashes password for user under mechanism, with
// a fresh random salt and MongoDB's default iteration count. It runs
// PBKDF2 (milliseconds): callers hold no lock while it runs.
func NewCredential(mechanism, user, password string) (Credential, error) {
	m, ok := mechs[mechanism]
	if !ok {
		return Credential{}, mongoerr.New(mongoerr.BadValue, "Unknown auth mechanism '%s'", mechanism)
	}
	pw, err := mechanismPassword(mechanism, user, password)
	if err != nil {
		return Credential{}, err
	}
	salt := make([]byte, m.saltLen)
	if _, err := rand.Read(salt); err != nil {
		return Credential{}, err
	}
	return derive(m, pw, salt, m.iters)
}

func derive(m mech, pw string, salt []byte, iters int) (Credential, error) {
	client, err := m.hash.NewClientUnprepped("", pw, "")
	if err != nil {
		return Credential{}, err
	}
	sc, err := client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: iters})
	if err != nil {
		return Credential{}, err
	}
	return Credential{Iterations: iters, Salt: salt, StoredKey: sc.StoredKey, ServerKey: sc.ServerKey}, nil
}

// Credentials are a user's credentials by mechanism.
type Credentials map[string]Credential

// NewCredentials makes credentials for each of mechanisms.
func NewCredentials(mechanisms []string, user, password string) (Credentials, error) {
	out := Credentials{}
	for _, m := range mechanisms {
		c, err := NewCredential(m, user, password)
		if err != nil {
			return nil, err
		}
		out[m] = c
	}
	return out, nil
}

// Doc is the user document's credentials field.
func (cs Credentials) Doc() bson.D {
	var d bson.D
	for _, m := range Mechanisms {
		if c, ok := cs[m]; ok {
			d = append(d, bson.E{Key: m, Value: c.Doc()})
		}
	}
	return d
}

// Mechanisms are the mechanisms cs holds credentials for, in MongoDB's
// order.
func (cs Credentials) Mechanisms() []string {
	var out []string
	for _, m := range Mechanisms {
		if _, ok := cs[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// ParseCredentials reads a user document's credentials field; mechanisms
// Folio does not serve are ignored.
func ParseCredentials(d bson.Raw) (Credentials, error) {
	out := Credentials{}
	elems, err := d.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.AuthSchemaIncompatible, "invalid credentials document")
	}
	for _, e := range elems {
		if !slices.Contains(Mechanisms, e.Key()) {
			continue
		}
		cd, ok := e.Value().DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.AuthSchemaIncompatible, "invalid %s credential", e.Key())
		}
		c, err := ParseCredential(cd)
		if err != nil {
			return nil, err
		}
		out[e.Key()] = c
	}
	return out, nil
}
