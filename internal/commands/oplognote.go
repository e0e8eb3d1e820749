package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	registerAdmin(appendOplogNoteCmd, untyped("appendOplogNote", arg("data", tAny), arg("maxClusterTime", tAny)), "appendOplogNote")
	authzRules["appendOplogNote"] = onCluster("appendOplogNote")
	supportsWriteConcern["appendOplogNote"] = true
}

// appendOplogNoteCmd runs {appendOplogNote: 1, data: {...}}: a no-op
// oplog entry holding data, which advances the cluster time. With
// maxClusterTime, only when the last write's time is below it; otherwise
// the reply says why in info, as MongoDB's does.
// https://www.mongodb.com/docs/v7.0/reference/command/appendOplogNote/
func appendOplogNoteCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.value("data")
	if v.Type == 0 {
		return nil, mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"data\"")
	}
	data, ok := v.DocumentOK()
	if !ok {
		return nil, extractTypeError("data", v, bson.TypeEmbeddedDocument)
	}
	if max := r.args.value("maxClusterTime"); max.Type != 0 {
		t, i, ok := max.TimestampOK()
		if !ok {
			return nil, extractTypeError("maxClusterTime", max, bson.TypeTimestamp)
		}
		if asked, last := clock.FromTimestamp(bson.Timestamp{T: t, I: i}), s.Clock.Now(); asked <= last {
			return marshal(bson.D{{Key: "info", Value: "Requested maxClusterTime " + asked.String() +
				" is less or equal to the last primary OpTime: " + last.String()}}), nil
		}
	}
	if err := s.Engine.AppendOplogNote(r.Ctx, data); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}
