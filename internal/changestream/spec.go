package changestream

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// Spec is a parsed $changeStream stage.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/changeStream/
type Spec struct {
	// FullDocument is "default", "updateLookup" (update events carry the
	// document as it is when the event is read), "whenAvailable" or
	// "required" (they carry the post-image: the pre-image the oplog kept,
	// updated).
	FullDocument string
	// FullDocumentBeforeChange is "off", "whenAvailable" or "required":
	// whether update, replace and delete events carry the pre-image.
	FullDocumentBeforeChange string
	// ResumeAfter, StartAfter and StartAt (startAtOperationTime) say where
	// the stream starts; at most one is set. StartAfter may name an
	// invalidate, and starts a new stream after it.
	ResumeAfter, StartAfter *Token
	StartAt                 *uint64
	AllChangesForCluster    bool
	// ShowExpandedEvents adds the create, createIndexes, dropIndexes and
	// modify events, collectionUUID, and updateDescription's
	// disambiguatedPaths.
	ShowExpandedEvents bool
	// ShowSystemEvents adds the events of the system collections MongoDB
	// shows with it (shownSystem).
	ShowSystemEvents bool
	// ShowRawUpdateDescription gives update events the oplog entry's
	// update ({$v: 2, diff: ...}) as rawUpdateDescription in place of
	// updateDescription (change_stream_event_transform.cpp).
	ShowRawUpdateDescription bool
}

// ParseSpec reads the $changeStream stage's argument.
func ParseSpec(v bson.RawValue) (Spec, error) {
	s := Spec{FullDocument: "default", FullDocumentBeforeChange: "off"}
	doc, ok := v.DocumentOK()
	if !ok {
		return s, mongoerr.New(mongoerr.ChangeStreamSpecNotObject, "$changeStream stage expects a document as argument")
	}
	resumes := 0
	it := rawdoc.Iterate(doc)
	for {
		k, f, ok := it.Next()
		if !ok {
			break
		}
		name := string(k)
		var err error
		switch name {
		case "resumeAfter", "startAfter":
			var t Token
			if t, err = ParseToken(f, name); err == nil {
				resumes++
				if name == "resumeAfter" {
					s.ResumeAfter = &t
				} else {
					s.StartAfter = &t
				}
			}
		case "startAtOperationTime":
			if f.Type != bson.TypeTimestamp {
				err = wrongType(name, f, "timestamp")
				break
			}
			secs, inc := f.Timestamp()
			ts := uint64(secs)<<32 | uint64(inc)
			s.StartAt = &ts
			resumes++
		case "fullDocument":
			s.FullDocument, err = enum(name, f, "default", "updateLookup", "whenAvailable", "required")
		case "fullDocumentBeforeChange":
			s.FullDocumentBeforeChange, err = enum(name, f, "off", "whenAvailable", "required")
		case "allChangesForCluster":
			s.AllChangesForCluster, err = boolField(name, f)
		case "showExpandedEvents":
			s.ShowExpandedEvents, err = boolField(name, f)
		case "showSystemEvents":
			s.ShowSystemEvents, err = boolField(name, f)
		case "showRawUpdateDescription":
			s.ShowRawUpdateDescription, err = boolField(name, f)
		case "showMigrationEvents", "allowToRunOnConfigDB", "allowToRunOnSystemNS":
			var on bool
			if on, err = boolField(name, f); err == nil && on {
				return s, mongoerr.New(mongoerr.NotImplemented, "$changeStream.%s is not supported by Folio", name)
			}
		default:
			return s, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$changeStream.%s' is an unknown field.", name)
		}
		if err != nil {
			return s, err
		}
	}
	// MongoDB's order (DocumentSourceChangeStream's spec validation):
	// both tokens, then a token with startAtOperationTime, then
	// resumeAfter an invalidate.
	if s.ResumeAfter != nil && s.StartAfter != nil {
		return s, mongoerr.New(mongoerr.ChangeStreamResumeAfterAndStartAfter, "Do not specify both 'resumeAfter' and 'startAfter' in a $changeStream stage")
	}
	if resumes > 1 {
		return s, mongoerr.New(mongoerr.ChangeStreamMultipleResumeOptions, "Only one type of resume option is allowed, but multiple were found")
	}
	if s.ResumeAfter != nil && s.ResumeAfter.FromInvalidate {
		return s, mongoerr.New(mongoerr.InvalidResumeToken, "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification")
	}
	return s, nil
}

func wrongType(name string, v bson.RawValue, want string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field '$changeStream.%s' is the wrong type '%s', expected type '%s'", name, values.TypeName(v.Type), want)
}

func boolField(name string, v bson.RawValue) (bool, error) {
	b, ok := v.BooleanOK()
	if !ok {
		return false, wrongType(name, v, "bool")
	}
	return b, nil
}

func enum(name string, v bson.RawValue, allowed ...string) (string, error) {
	s, ok := v.StringValueOK()
	if !ok {
		return "", wrongType(name, v, "string")
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '$changeStream.%s' is not a valid value.", s, name)
}
