package sessions

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// A session is its lsid, {id, uid}, as in MongoDB: the UUID a client chose
// and the digest of the user who uses it, the SHA-256 of "user@db" (of ""
// without access control). Two users naming the same id have two
// sessions. The registry keys a session by the id's 16 bytes, followed by
// the uid's 32 unless the uid is the anonymous one: a session opened
// without access control is keyed by its id alone.

// idLen is the length of an lsid's id, a UUID.
const idLen = 16

// anonymousUID is the uid (user digest) of sessions opened without
// authentication: the SHA-256 of the empty user name, as MongoDB computes it.
var anonymousUID = sha256.Sum256(nil)

// UserUID is the uid of user's sessions ("user@db"; "" for none).
func UserUID(user string) [32]byte { return sha256.Sum256([]byte(user)) }

// NamedUID is the uid of the sessions of the user a command names by
// {user, db}, as MongoDB's getLogicalSessionUserDigestFor computes it: the
// anonymous uid when both are empty, else the UserUID of "user@db".
func NamedUID(user, db string) [32]byte {
	if user == "" && db == "" {
		return anonymousUID
	}
	return UserUID(user + "@" + db)
}

// Key is the key of the session of id used by user ("user@db"; "" for
// none).
func Key(id, user string) string {
	if user == "" {
		return id
	}
	return KeyOf(id, UserUID(user))
}

// KeyOf is the key of the session {id, uid}.
func KeyOf(id string, uid [32]byte) string {
	if uid == anonymousUID {
		return id
	}
	return id + string(uid[:])
}

// Split returns the id and uid of the session key names.
func Split(key string) (id string, uid [32]byte) {
	if len(key) == idLen+len(uid) {
		copy(uid[:], key[idLen:])
		return key[:idLen], uid
	}
	return key, anonymousUID
}

// LSID is the lsid of the session key names, {id, uid}.
func LSID(key string) bson.D {
	id, uid := Split(key)
	return bson.D{
		{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: []byte(id)}},
		{Key: "uid", Value: bson.Binary{Subtype: bson.TypeBinaryGeneric, Data: uid[:]}},
	}
}

// appendLSIDFields appends the fields of the lsid of the session key
// names, as its record and oplog entries name it: {id, uid}.
func appendLSIDFields(dst []byte, key string) []byte {
	id, uid := Split(key)
	dst = bsoncore.AppendBinaryElement(dst, "id", bson.TypeBinaryUUID, []byte(id))
	return bsoncore.AppendBinaryElement(dst, "uid", bson.TypeBinaryGeneric, uid[:])
}

// Text shows the session key names as MongoDB's messages show a
// LogicalSessionId: its id (a UUID), its user digest, then the empty
// txnNumber and txnUUID of a client session, separated by " - ".
func Text(key string) string {
	id, uid := Split(key)
	shown := hex.EncodeToString([]byte(id))
	if len(id) == idLen {
		shown = shown[:8] + "-" + shown[8:12] + "-" + shown[12:16] + "-" + shown[16:20] + "-" + shown[20:]
	}
	return shown + " - " + base64.StdEncoding.EncodeToString(uid[:]) + " -  - "
}
