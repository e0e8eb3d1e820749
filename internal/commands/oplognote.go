package commands

import (
	"fmt"

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
		if last := s.Clock.Now(); clock.FromTimestamp(bson.Timestamp{T: t, I: i}) <= last {
			return marshal(bson.D{{Key: "info", Value: "Requested maxClusterTime " + logicalTime(t, i) +
				" is less or equal to the last primary OpTime: " + logicalTime(last.Secs(), last.Inc())}}), nil
		}
	}
	if err := s.Engine.AppendOplogNote(r.Ctx, data); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// logicalTime shows a cluster time as MongoDB's LogicalTime::toString:
// Timestamp(secs, inc).
func logicalTime(secs, inc uint32) string {
	return fmt.Sprintf("Timestamp(%d, %d)", secs, inc)
}
