package commands

import (
	"encoding/binary"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/apiparams"
	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// GenericArgs are the arguments every command accepts beside its own
// (MongoDB's idl/generic_argument.idl), parsed and validated once, before
// the command runs. Handlers read them here, never from the command.
type GenericArgs struct {
	Session      sessionArgs
	WriteConcern WriteConcern
	ReadConcern  ReadConcern
	// MaxTimeMS is the command's time limit (HasMaxTimeMS when given);
	// Deadline is when it runs out, zero when there is none (or 0).
	MaxTimeMS    int64
	HasMaxTimeMS bool
	Deadline     time.Time
	// ClusterTime is the $clusterTime the client gossiped; zero if none.
	ClusterTime clock.Time
	API         apiparams.Params
	// SecondaryOk: the $readPreference lets a secondary serve the command
	// (a mode other than primary).
	SecondaryOk bool
}

// genericArg parses one generic argument into a; nil for those parsed
// elsewhere or that need nothing (see genericArgs).
type genericArg func(a *GenericArgs, v bson.RawValue) error

// genericArgs are MongoDB 7.0's generic arguments. Each is honoured,
// validated, or, when Folio does not honour it and a one-member replica set
// would not ignore it, refused with NotImplemented.
var genericArgs = map[string]genericArg{
	// The server reads $db; sessionFields reads the session fields.
	"$db": nil, "lsid": nil, "txnNumber": nil, "autocommit": nil, "startTransaction": nil, "txnRetryCounter": nil,
	// comment is any value; currentOp shows it with the command.
	"comment": nil,
	// stmtId is any value: the retryable writes, which use it, declare
	// it (retry.go); MongoDB's other commands ignore it.
	"stmtId":          nil,
	"maxTimeMS":       parseMaxTimeMS,
	"readConcern":     parseReadConcern,
	"writeConcern":    parseWriteConcern,
	"$readPreference": parseReadPreference,
	"$clusterTime":    parseClusterTime,
	"apiVersion": func(a *GenericArgs, v bson.RawValue) error {
		if v.Type != bson.TypeString {
			return apiParamType("apiVersion", v, "string")
		}
		a.API.HasVersion, a.API.Version = true, v.StringValue()
		return nil
	},
	"apiStrict": func(a *GenericArgs, v bson.RawValue) error {
		if v.Type != bson.TypeBoolean {
			return apiParamType("apiStrict", v, "bool")
		}
		a.API.HasStrict, a.API.Strict = true, v.Boolean()
		return nil
	},
	"apiDeprecationErrors": func(a *GenericArgs, v bson.RawValue) error {
		if v.Type != bson.TypeBoolean {
			return apiParamType("apiDeprecationErrors", v, "bool")
		}
		a.API.HasDeprecationErrors, a.API.DeprecationErrors = true, v.Boolean()
		return nil
	},
	// Auditing is not part of MongoDB Community, which ignores $audit;
	// $client is a router's client metadata; no user write blocking exists
	// to bypass; $queryOptions only wraps a router's $readPreference.
	"$audit": nil, "$client": nil, "mayBypassWriteBlocking": nil, "$queryOptions": nil,
	// $tenant is multitenancy's, which a server without it refuses in
	// OpMsg::parse.
	"$tenant": func(*GenericArgs, bson.RawValue) error {
		return mongoerr.New(mongoerr.InvalidOptions, "Multitenancy not enabled, cannot set $tenant in command body")
	},
	// Collections are created implicitly on first write, which is what
	// allowImplicitCollectionCreation: true asks for.
	"allowImplicitCollectionCreation": func(_ *GenericArgs, v bson.RawValue) error {
		if values.Truthy(v) {
			return nil
		}
		return notHonoured("allowImplicitCollectionCreation")
	},
}

// refusedArgs are the generic arguments of sharding, internal replication
// and multitenancy (but $tenant, which MongoDB refuses without it), which
// Folio does not honour.
var refusedArgs = map[string]bool{
	"clientOperationKey": true, "$configServerState": true, "$oplogQueryData": true, "$replData": true,
	"databaseVersion": true, "shardVersion": true, "tracking_info": true, "coordinator": true,
	"maxTimeMSOpOnly": true, "$configTime": true, "$topologyTime": true,
	"expectPrefix": true,
}

func notHonoured(name string) error {
	return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the generic argument '%s'", name)
}

// isGenericArg reports whether a command field is a generic argument.
func isGenericArg(key string) bool {
	_, ok := genericArgs[key]
	return ok || refusedArgs[key]
}

// parseGeneric reads cmd's generic arguments into a in one pass over its
// fields, without allocating. The session fields' errors come before the
// others' (the first of those in field order), as when they were read
// first. replSet tells whether the server is a replica set member, which
// alone takes a txnNumber.
func parseGeneric(cmd bson.Raw, a *GenericArgs, replSet bool) error {
	*a = GenericArgs{}
	if len(cmd) < 5 || int(binary.LittleEndian.Uint32(cmd)) != len(cmd) || cmd[len(cmd)-1] != 0 {
		return invalidCommand("length prefix does not match the document")
	}
	var sess sessionFields
	var argErr error
	var name []byte
	it := rawdoc.Iterate(cmd)
	for i := 0; len(it.Rest()) > 0; i++ {
		k, v, ok := it.Next()
		if !ok {
			return invalidCommand("malformed element")
		}
		if i == 0 {
			name = k
		}
		if i == 0 || sess.take(k, v) || argErr != nil {
			continue
		}
		if refusedArgs[string(k)] {
			argErr = notHonoured(string(k))
		} else if fn := genericArgs[string(k)]; fn != nil {
			if argErr = checkDeclaredMaxTimeMS(name, k, v); argErr == nil {
				argErr = fn(a, v)
			}
		}
	}
	var err error
	if a.Session, err = sess.parse(cmd, replSet); err != nil {
		return err
	}
	if argErr != nil {
		return argErr
	}
	if (a.API.HasStrict || a.API.HasDeprecationErrors) && !a.API.HasVersion {
		return mongoerr.New(mongoerr.APIParametersWithoutVersion, "Provided apiStrict and/or apiDeprecationErrors without passing apiVersion")
	}
	return nil
}

func invalidCommand(why string) error {
	return mongoerr.New(mongoerr.InvalidBSON, "invalid command document: %s", why)
}

// apiParamType is the IDL's error for a Stable API parameter of the wrong
// type.
func apiParamType(field string, v bson.RawValue, want string) error {
	return wrongType("APIParametersFromClient", field, v, want)
}

// parseMaxTimeMS reads maxTimeMS as MongoDB's generic parser does: a
// number, integral if a double, within [0, 2^31-1]; 0 means no limit.
func parseMaxTimeMS(a *GenericArgs, v bson.RawValue) error {
	if !values.IsNumber(v.Type) {
		return mongoerr.New(mongoerr.BadValue, "maxTimeMS must be a number")
	}
	ms, _ := safeInt64(v)
	if ms < 0 || ms > 1<<31-1 {
		return mongoerr.New(mongoerr.BadValue, "%d value for maxTimeMS is out of range [0, 2147483647]", ms)
	}
	if v.Type == bson.TypeDouble && v.Double() != float64(int64(v.Double())) {
		return mongoerr.New(mongoerr.BadValue, "maxTimeMS has non-integral value")
	}
	a.MaxTimeMS, a.HasMaxTimeMS = ms, true
	if ms > 0 {
		a.Deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
	}
	return nil
}

// checkDeclaredMaxTimeMS applies the checks of the commands whose request
// MongoDB declares maxTimeMS in, an IDL safeInt64 (aggregate's at least
// 0), before the generic argument's parse: another type is a
// TypeMismatch, a negative number aggregate's IDLValueOutOfRange.
func checkDeclaredMaxTimeMS(cmd, key []byte, v bson.RawValue) error {
	if string(key) != "maxTimeMS" || string(cmd) != "aggregate" && string(cmd) != "getMore" {
		return nil
	}
	switch {
	case v.Type == bson.TypeNull || v.Type == bson.TypeUndefined:
	case !values.IsNumber(v.Type):
		return mongoerr.WrongNumberType(string(cmd)+".maxTimeMS", values.TypeName(v.Type))
	case string(cmd) == "aggregate":
		if ms, _ := safeInt64(v); ms < 0 {
			return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'maxTimeMS' value must be >= 0, actual value '%d'", ms)
		}
	}
	return nil
}

// readPreferenceModes are the modes $readPreference may name.
var readPreferenceModes = map[string]bool{
	"primary": true, "primaryPreferred": true, "secondary": true, "secondaryPreferred": true, "nearest": true,
}

// parseReadPreference validates $readPreference: an object whose mode is
// one of MongoDB's; any but primary lets a secondary serve the command.
func parseReadPreference(a *GenericArgs, v bson.RawValue) error {
	doc, ok := v.DocumentOK()
	if !ok {
		return extractTypeError("$readPreference", v, bson.TypeEmbeddedDocument)
	}
	mode, err := doc.LookupErr("mode")
	if err != nil {
		return mongoerr.MissingField("$readPreference.mode")
	}
	if mode.Type != bson.TypeString {
		return wrongType("$readPreference", "mode", mode, "string")
	}
	if !readPreferenceModes[mode.StringValue()] {
		return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '$readPreference.mode' is not a valid value.", mode.StringValue())
	}
	a.SecondaryOk = mode.StringValue() != "primary"
	return nil
}

// extractTypeError is the error of MongoDB's bsonExtractTypedField.
func extractTypeError(field string, v bson.RawValue, want bson.Type) error {
	return mongoerr.New(mongoerr.TypeMismatch, "\"%s\" had the wrong type. Expected %s, found %s",
		field, values.TypeName(want), values.TypeName(v.Type))
}

// maxClockDriftSecs is how far ahead of the wall clock a gossiped cluster
// time may be (MongoDB's maxAcceptableLogicalClockDriftSecs default: one
// year).
const maxClockDriftSecs = 365 * 24 * 60 * 60

// parseClusterTime validates a gossiped $clusterTime: {clusterTime:
// Timestamp, signature: {hash: BinData, keyId: integer}}. Without
// authentication the signature is not checked, as in MongoDB.
func parseClusterTime(a *GenericArgs, v bson.RawValue) error {
	doc, ok := v.DocumentOK()
	if !ok {
		return mongoerr.ExpectedObject("$clusterTime")
	}
	ctv, err := doc.LookupErr("clusterTime")
	if err != nil {
		return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"clusterTime\"")
	}
	if ctv.Type != bson.TypeTimestamp {
		return extractTypeError("clusterTime", ctv, bson.TypeTimestamp)
	}
	sigv, err := doc.LookupErr("signature")
	if err != nil {
		return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"signature\"")
	}
	sig, ok := sigv.DocumentOK()
	if !ok {
		return extractTypeError("signature", sigv, bson.TypeEmbeddedDocument)
	}
	hash, err := sig.LookupErr("hash")
	if err != nil {
		return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"hash\"")
	}
	if hash.Type != bson.TypeBinary {
		return extractTypeError("hash", hash, bson.TypeBinary)
	}
	keyID, err := sig.LookupErr("keyId")
	if err != nil {
		return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"keyId\"")
	}
	if !values.IsNumber(keyID.Type) {
		return mongoerr.New(mongoerr.TypeMismatch, "Expected field \"keyId\" to have numeric type, but found %s", values.TypeName(keyID.Type))
	}
	t, i := ctv.Timestamp()
	ct := clock.FromTimestamp(bson.Timestamp{T: t, I: i})
	if wall := time.Now().Unix(); int64(t) > wall+maxClockDriftSecs {
		return mongoerr.New(mongoerr.ClusterTimeFailsRateLimiter,
			"New cluster time, %d, is too far from this node's wall clock time, %d.", t, wall)
	}
	a.ClusterTime = ct
	return nil
}
