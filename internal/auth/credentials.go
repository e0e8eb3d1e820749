package auth

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

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

// DefaultAuthenticationMechanisms are the mechanisms MongoDB enables by
// default (authenticationMechanisms; SASLGlobalParams,
// auth/sasl_options.cpp), which are the ones Folio serves.
var DefaultAuthenticationMechanisms = []string{X509, SHA1, SHA256}

// CheckAuthenticationMechanisms refuses an authenticationMechanisms list
// naming a mechanism Folio does not serve, as mongod refuses to start
// with one its registry lacks (ValidateSASLServerMechanismRegistry), or
// naming none.
func CheckAuthenticationMechanisms(ms []string) error {
	if len(ms) == 0 {
		return errors.New("authenticationMechanisms: at least one mechanism is needed")
	}
	for _, m := range ms {
		if !slices.Contains(DefaultAuthenticationMechanisms, m) {
			return fmt.Errorf("SASL Mechanism '%s' is not supported (Folio serves %s)", m, strings.Join(DefaultAuthenticationMechanisms, ", "))
		}
	}
	return nil
}

// CountedMechanism reports whether MongoDB takes an authentication with
// mechanism m at all, which its authentication counters decide
// (AuthCounter::getMechanismCounter, stats/counters.cpp): those enabled,
// and MONGODB-X509 and SCRAM-SHA-256 always, which a cluster may use for
// its own members. The others fail with MechanismUnavailable before any
// step.
func CountedMechanism(enabled []string, m string) bool {
	return m == X509 || m == SHA256 || slices.Contains(enabled, m)
}

// mech describes one SCRAM mechanism: its hash and salt length (the hash
// length less 4 bytes).
type mech struct {
	hash    scram.HashGeneratorFcn
	saltLen int
}

var mechs = map[string]mech{
	SHA1:   {hash: scram.SHA1, saltLen: 16},
	SHA256: {hash: scram.SHA256, saltLen: 28},
}

// Iterations are the iteration counts new SCRAM credentials get, by
// mechanism: MongoDB's scramIterationCount and scramSHA256IterationCount.
type Iterations struct {
	SHA1, SHA256 int
}

// DefaultIterations are MongoDB's defaults for those parameters.
var DefaultIterations = Iterations{SHA1: 10000, SHA256: 15000}

// MinIterations is the least iteration count either parameter takes.
const MinIterations = 5000

// of is the count for mechanism.
func (it Iterations) of(mechanism string) int {
	if mechanism == SHA1 {
		return it.SHA1
	}
	return it.SHA256
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

// SASLprep normalizes a SCRAM-SHA-256 password as MongoDB does
// (icuSaslPrep, util/icu.cpp: ICU's RFC 4013 profile for stored strings,
// preflighted at each step), with MongoDB's errors, which name ICU's: an
// empty password fails converting from UTF-8 (50687
// U_STRING_NOT_TERMINATED_WARNING); bytes that are not UTF-8 are
// BadValue; then normalization (50692) refuses a character unassigned in
// Unicode 3.2 (U_STRINGPREP_UNASSIGNED_ERROR, checked first, as ICU checks
// it while mapping), a prohibited one once mapped and normalized
// (U_STRINGPREP_PROHIBITED_ERROR: controls, NUL included, private use,
// non-characters...), a string breaking the bidirectional rules
// (U_STRINGPREP_CHECK_BIDI_ERROR), and a password mapped to nothing (soft
// hyphens alone: U_STRING_NOT_TERMINATED_WARNING again).
func SASLprep(password string) (string, error) {
	prepErr := func(icuErr string) error {
		return mongoerr.New(mongoerr.SASLprepNormalization, "Error preflighting normalization: %s", icuErr)
	}
	switch {
	case password == "":
		return "", mongoerr.New(mongoerr.SASLprepUTF8Conversion, "Error preflighting UTF-8 conversion: U_STRING_NOT_TERMINATED_WARNING")
	case !utf8.ValidString(password):
		return "", mongoerr.New(mongoerr.BadValue, "Non UTF-8 data encountered")
	}
	for _, r := range password {
		if stringprep.TableA1.Contains(r) {
			return "", prepErr("U_STRINGPREP_UNASSIGNED_ERROR")
		}
	}
	// U+200B is both commonly mapped to nothing (B.1) and a non-ASCII
	// space (C.1.2); ICU's profile, unlike stringprep's, maps it to a space
	p, err := stringprep.SASLprep.Prepare(strings.ReplaceAll(password, "\u200b", " "))
	var se stringprep.Error
	switch {
	case errors.As(err, &se) && strings.HasPrefix(se.Msg, "BiDi"):
		return "", prepErr("U_STRINGPREP_CHECK_BIDI_ERROR")
	case err != nil:
		return "", prepErr("U_STRINGPREP_PROHIBITED_ERROR")
	case p == "":
		return "", prepErr("U_STRING_NOT_TERMINATED_WARNING")
	}
	return p, nil
}

// NewCredential salts and hashes pw, the string a mechanism derives its
// keys from (see NewCredentials), with a fresh random salt, iterating
// iters times. It runs PBKDF2 (milliseconds): callers hold no lock while
// it runs.
func NewCredential(mechanism, pw string, iters int) (Credential, error) {
	m, ok := mechs[mechanism]
	if !ok {
		return Credential{}, mongoerr.New(mongoerr.BadValue, "Unknown auth mechanism '%s'", mechanism)
	}
	salt := make([]byte, m.saltLen)
	if _, err := rand.Read(salt); err != nil {
		return Credential{}, err
	}
	return derive(m, pw, salt, iters)
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

// md5Digest is MongoDB's password digest (createPasswordDigest):
// hex(md5(user:mongo:password)).
func md5Digest(user, password string) string {
	sum := md5.Sum([]byte(user + ":mongo:" + password))
	return hex.EncodeToString(sum[:])
}

// NewCredentials makes user's credentials for password under each of
// mechanisms (SCRAM-SHA-1 and SCRAM-SHA-256, in any order), as MongoDB's
// buildCredentials does (commands/user_management_commands.cpp).
// SCRAM-SHA-1 derives its keys from MongoDB's digest,
// hex(md5(user:mongo:password)), or, when digest is false, from the
// password as given (a client's digest); it never normalizes the
// password, so any password will do, the empty one included.
// SCRAM-SHA-256 refuses digest false (BadValue) and derives its keys from
// the password normalized by SASLprep, whose errors are MongoDB's. Every
// check runs before any key is derived; each mechanism's keys take its
// iteration count in iters.
func NewCredentials(mechanisms []string, user, password string, digest bool, iters Iterations) (Credentials, error) {
	pw := map[string]string{}
	for _, m := range []string{SHA1, SHA256} {
		if !slices.Contains(mechanisms, m) {
			continue
		}
		switch {
		case m == SHA1 && digest:
			pw[m] = md5Digest(user, password)
		case m == SHA1:
			pw[m] = password
		case !digest:
			return nil, mongoerr.New(mongoerr.BadValue, "Use of SCRAM-SHA-256 requires undigested passwords")
		default:
			p, err := SASLprep(password)
			if err != nil {
				return nil, err
			}
			pw[m] = p
		}
	}
	out := Credentials{}
	for m, p := range pw {
		c, err := NewCredential(m, p, iters.of(m))
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
