package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// WriteConcern is a command's parsed writeConcern. On one node every write
// is on the only member once applied, so w: 1 and w: "majority" are met on
// return; "majority" and j wait for the journal (a WAL sync). w above 1 or
// a tag name cannot be met: the write is applied and the reply carries a
// writeConcernError, as on a one-member replica set.
type WriteConcern struct {
	// Given is set when the command sent a non-empty writeConcern; an empty
	// one means the default, {w: 1}.
	Given bool
	// W is a numeric w (1 by default); WMode a string w ("majority" or a
	// tag), which IsMode marks: any string is a mode, the empty one too
	// (7.0's WriteConcernW keeps the string; only a numeric w below 1 is
	// unacknowledged).
	W          int64
	WMode      string
	IsMode     bool
	J, HasJ    bool
	FSync      bool
	WTimeout   int64
	Provenance string
}

// maxReplSetMembers is the largest w MongoDB accepts.
const maxReplSetMembers = 50

// provenances are the values writeConcern.provenance may take.
var provenances = map[string]bool{
	"clientSupplied": true, "implicitDefault": true, "customDefault": true, "getLastErrorDefaults": true,
	"internalWriteDefault": true,
}

// parseWriteConcern reads writeConcern as MongoDB's WriteConcernIdl does.
func parseWriteConcern(a *GenericArgs, v bson.RawValue) error {
	doc, ok := v.DocumentOK()
	if !ok {
		return extractTypeError("writeConcern", v, bson.TypeEmbeddedDocument)
	}
	wc := WriteConcern{W: 1, Provenance: "clientSupplied"}
	elems, err := doc.Elements()
	if err != nil {
		return mongoerr.New(mongoerr.InvalidBSON, "invalid writeConcern: %v", err)
	}
	if len(elems) == 0 {
		a.WriteConcern = wc
		return nil
	}
	wc.Given = true
	for _, el := range elems {
		v := el.Value()
		switch el.Key() {
		case "w":
			switch {
			case values.IsNumber(v.Type):
				n, _ := safeInt64(v)
				if n < 0 || n > maxReplSetMembers {
					return mongoerr.New(mongoerr.FailedToParse, "w has to be a non-negative number and not greater than %d; found: %d", maxReplSetMembers, n)
				}
				wc.W, wc.WMode, wc.IsMode = n, "", false
			case v.Type == bson.TypeString:
				wc.W, wc.WMode, wc.IsMode = 0, v.StringValue(), true
			case v.Type == bson.TypeEmbeddedDocument && rawdoc.Len(v.Value) == 0:
				return mongoerr.New(mongoerr.FailedToParse, "tagged write concern requires tags")
			case v.Type == bson.TypeEmbeddedDocument:
				// MongoDB's deserializeWriteConcernW takes only number
				// values; a valid tag set is what Folio does not honour.
				tags, _ := bson.Raw(v.Value).Elements()
				for _, tag := range tags {
					if !values.IsNumber(tag.Value().Type) {
						return mongoerr.New(mongoerr.FailedToParse, "tags must be a single level document with only number values; found: %s", values.ShellElement(tag.Key(), tag.Value()))
					}
				}
				return mongoerr.New(mongoerr.NotImplemented, "Folio does not support tagged write concerns (writeConcern.w as an object)")
			case v.Type == bson.TypeNull || v.Type == bson.TypeUndefined:
			default:
				return mongoerr.New(mongoerr.FailedToParse, "w has to be a number, string, or object; found: %s", values.TypeName(v.Type))
			}
		case "j":
			if wc.J, err = safeBool("writeConcern", "j", v); err != nil {
				return err
			}
			wc.HasJ = true
		case "fsync":
			if wc.FSync, err = safeBool("writeConcern", "fsync", v); err != nil {
				return err
			}
		case "wtimeout":
			// MongoDB reads any number and takes anything else as 0.
			if values.IsNumber(v.Type) {
				wc.WTimeout, _ = safeInt64(v)
			}
		case "provenance":
			if v.Type != bson.TypeString {
				return wrongType("writeConcern", "provenance", v, "string")
			}
			if !provenances[v.StringValue()] {
				return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'writeConcern.provenance' is not a valid value.", v.StringValue())
			}
			wc.Provenance = v.StringValue()
		case "wElectionId", "wOpTime", "getLastError":
			// Accepted for compatibility and ignored, as in MongoDB.
		default:
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'writeConcern.%s' is an unknown field.", el.Key())
		}
	}
	if wc.J && wc.FSync {
		return mongoerr.New(mongoerr.FailedToParse, "fsync and j options cannot be used together")
	}
	a.WriteConcern = wc
	return nil
}

// safeBool reads an IDL safeBool: a boolean or a number (non-zero is true).
func safeBool(where, field string, v bson.RawValue) (bool, error) {
	if v.Type == bson.TypeBoolean || values.IsNumber(v.Type) {
		return values.Truthy(v), nil
	}
	return false, mongoerr.WrongTypes(where+"."+field, values.TypeName(v.Type), append([]string{"bool"}, mongoerr.NumberTypes()...)...)
}

// Journal reports whether the write must be on disk when acknowledged: j
// or fsync asked for it, or w: "majority", which on one node is the same.
func (wc WriteConcern) Journal() bool {
	return wc.J || wc.FSync || wc.WMode == "majority"
}

// Unacknowledged reports w: 0 without j or fsync: the client wants no
// answer.
func (wc WriteConcern) Unacknowledged() bool {
	return wc.Given && !wc.IsMode && wc.W == 0 && !wc.J && !wc.FSync
}

// standaloneError is MongoDB's refusal of a write concern a standalone
// cannot even wait for.
func (wc WriteConcern) standaloneError() error {
	switch {
	case !wc.IsMode && wc.W > 1:
		return mongoerr.New(mongoerr.BadValue, "cannot use 'w' > 1 when a host is not replicated")
	case wc.IsMode && wc.WMode != "majority":
		return mongoerr.New(mongoerr.BadValue, "cannot use non-majority 'w' mode \"%s\" when a host is not a member of a replica set", wc.WMode)
	}
	return nil
}

// replSetError is why a one-member replica set cannot satisfy wc, or nil.
func (wc WriteConcern) replSetError() *mongoerr.Error {
	switch {
	case !wc.IsMode && wc.W > 1:
		return mongoerr.New(mongoerr.UnsatisfiableWriteConcern, "Not enough data-bearing nodes")
	case wc.IsMode && wc.WMode != "majority":
		return unknownWriteMode(wc.WMode)
	}
	return nil
}

// unknownWriteMode is the refusal of a write concern mode (or commit
// quorum) naming a tag set the replica set configuration does not define
// (ReplSetConfig::findCustomWriteMode); Folio's defines none.
func unknownWriteMode(mode string) *mongoerr.Error {
	return mongoerr.New(mongoerr.UnknownReplWriteConcern, "No write concern mode named '%s' found in replica set configuration", mode)
}

// withWriteConcernError appends writeConcernError {code, codeName, errmsg,
// errInfo: {writeConcern}} to a reply (before ok, which withOK adds) when
// the write concern cannot be satisfied; the write itself stands.
func withWriteConcernError(reply bson.Raw, wc WriteConcern) bson.Raw {
	e := wc.replSetError()
	if e == nil {
		return reply
	}
	idx, out := bsoncore.AppendDocumentElementStart(make([]byte, 0, 256), "writeConcernError")
	out, _ = e.AppendStatus(out) // no extra fields, nothing to fail
	info, out := bsoncore.AppendDocumentElementStart(out, "errInfo")
	used, out := bsoncore.AppendDocumentElementStart(out, "writeConcern")
	if wc.IsMode {
		out = bsoncore.AppendStringElement(out, "w", wc.WMode)
	} else {
		out = bsoncore.AppendInt32Element(out, "w", int32(wc.W))
	}
	switch {
	case wc.FSync:
		out = bsoncore.AppendBooleanElement(out, "fsync", true)
	case wc.HasJ:
		out = bsoncore.AppendBooleanElement(out, "j", wc.J)
	}
	out = bsoncore.AppendInt32Element(out, "wtimeout", int32(wc.WTimeout))
	out = bsoncore.AppendStringElement(out, "provenance", wc.Provenance)
	out, _ = bsoncore.AppendDocumentEnd(out, used)
	out, _ = bsoncore.AppendDocumentEnd(out, info)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return appendFields(reply, out)
}

// supportsWriteConcern are the commands that take a writeConcern; others
// refuse one, as MongoDB does (see takesWriteConcern for mapReduce).
var supportsWriteConcern = map[string]bool{
	"insert": true, "update": true, "delete": true, "findAndModify": true, "findandmodify": true,
	"aggregate": true, "create": true, "drop": true, "dropDatabase": true, "renameCollection": true,
	"collMod": true, "createIndexes": true, "dropIndexes": true, "deleteIndexes": true,
	"commitTransaction": true, "abortTransaction": true, "applyOps": true,
	"cloneCollectionAsCapped": true, "convertToCapped": true, "setDefaultRWConcern": true,
	"setFeatureCompatibilityVersion": true,
	// user_management_commands: every command that writes users or roles
	"createUser": true, "updateUser": true, "dropUser": true, "dropAllUsersFromDatabase": true,
	"grantRolesToUser": true, "revokeRolesFromUser": true, "createRole": true, "updateRole": true,
	"dropRole": true, "dropAllRolesFromDatabase": true, "grantPrivilegesToRole": true,
	"revokePrivilegesFromRole": true, "grantRolesToRole": true, "revokeRolesFromRole": true,
}

// takesWriteConcern reports whether command name, as r sends it, takes a
// writeConcern: mapReduce does when it writes a collection (MongoDB's
// mrSupportsWriteConcern), not with out: {inline: 1}.
func takesWriteConcern(r *Request, name string) bool {
	if name == "mapReduce" || name == "mapreduce" {
		out := r.args.value("out")
		doc, ok := out.DocumentOK()
		return out.Type != 0 && !(ok && values.Truthy(doc.Lookup("inline")))
	}
	return supportsWriteConcern[name]
}

// checkWriteConcern refuses a write concern the command cannot take: one
// sent to a command that does not write, one inside a transaction (only its
// commit or abort may carry one), or on a standalone one that needs other
// members.
func (s *Service) checkWriteConcern(r *Request, name string) error {
	wc := r.Args.WriteConcern
	if !wc.Given {
		return nil
	}
	if !takesWriteConcern(r, name) {
		return mongoerr.New(mongoerr.InvalidOptions, "Command does not support writeConcern")
	}
	if r.Args.Session.inTxn && name != "commitTransaction" && name != "abortTransaction" {
		return mongoerr.New(mongoerr.InvalidOptions, "writeConcern is not allowed within a multi-statement transaction")
	}
	if s.ReplSetName == "" {
		return wc.standaloneError()
	}
	return nil
}

// applyDefaultWriteConcern gives a command that takes a write concern and
// was sent none (or an empty one) the default, on a replica set member as
// MongoDB does; a statement inside a transaction takes none.
func (s *Service) applyDefaultWriteConcern(r *Request, name string) error {
	if r.Args.WriteConcern.Given || s.ReplSetName == "" || !takesWriteConcern(r, name) ||
		r.Args.Session.inTxn && name != "commitTransaction" && name != "abortTransaction" {
		return nil
	}
	wc, err := s.defaultWriteConcern()
	r.Args.WriteConcern = wc
	return err
}

// waitsForWriteConcern reports whether a command that ran waits for its
// write concern, whether it succeeded or failed, as MongoDB's
// waitForWriteConcern after every command: one that may write outside a
// transaction (not a read-only aggregate), or one ending a transaction.
// https://www.mongodb.com/docs/v7.0/reference/write-concern/
func waitsForWriteConcern(r *Request, name string) bool {
	return commits(r, name) || name == "abortTransaction"
}

// unacknowledgedReply is the reply of insert, update or delete (name)
// under w: 0: n (and for update nModified) at their defaults, 0, whatever
// the command did, as write_ops.idl declares them and populateReply leaves
// them.
func unacknowledgedReply(name string) bson.Raw {
	if name == "update" {
		return unacknowledgedUpdate
	}
	return unacknowledgedWrite
}

var (
	unacknowledgedWrite  = bson.Raw(bsoncore.NewDocumentBuilder().AppendInt32("n", 0).Build())
	unacknowledgedUpdate = bson.Raw(bsoncore.NewDocumentBuilder().AppendInt32("n", 0).AppendInt32("nModified", 0).Build())
)

// refusedBeforeRun reports whether err refuses the command before it runs,
// so before any wait for its write concern, as MongoDB does: its IDL parse
// (unknown, duplicate, missing or mistyped fields, an empty or oversized
// write batch) or its authorization (an admin-only command elsewhere).
func refusedBeforeRun(err error) bool {
	switch mongoerr.As(err).Code {
	case mongoerr.IDLUnknownField, mongoerr.IDLDuplicateField, mongoerr.IDLFailedToParse,
		mongoerr.IDLValueOutOfRange, mongoerr.TypeMismatch, mongoerr.InvalidLength, mongoerr.Unauthorized:
		return true
	}
	return false
}
