package commands

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(replSetGetStatusCmd, untyped("replSetGetStatus"), "replSetGetStatus")
	register(replSetGetConfigCmd, untyped("replSetGetConfig"), "replSetGetConfig")
}

// notReplSet is MongoDB's answer to replica set commands on a standalone.
func (s *Service) notReplSet() error {
	if s.ReplSetName == "" {
		return mongoerr.New(mongoerr.NoReplicationEnabled, "not running with --replSet")
	}
	return nil
}

// replSetGetStatusCmd describes the one-member replica set Folio reports:
// itself, healthy, the primary or (after a step down) a secondary; a
// primary's entry has its election's date.
func replSetGetStatusCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.notReplSet(); err != nil {
		return nil, err
	}
	now, st := time.Now(), s.state()
	state, stateStr := int32(1), "PRIMARY"
	if st.role == roleSecondary {
		state, stateStr = 2, "SECONDARY"
	}
	self := bson.D{
		{Key: "_id", Value: int32(0)},
		{Key: "name", Value: s.Host},
		{Key: "health", Value: 1.0},
		{Key: "state", Value: state},
		{Key: "stateStr", Value: stateStr},
		{Key: "uptime", Value: int64(now.Sub(s.Started).Seconds())},
	}
	if st.role != roleSecondary {
		self = append(self, bson.E{Key: "electionDate", Value: bson.NewDateTimeFromTime(st.elected)})
	}
	self = append(self, bson.E{Key: "self", Value: true})
	return marshal(bson.D{
		{Key: "set", Value: s.ReplSetName},
		{Key: "date", Value: bson.NewDateTimeFromTime(now)},
		{Key: "myState", Value: state},
		{Key: "term", Value: int64(1)},
		{Key: "members", Value: bson.A{self}},
	}), nil
}

// replSetGetConfigCmd reports the one-member replica set's configuration.
func replSetGetConfigCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.notReplSet(); err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "config", Value: bson.D{
		{Key: "_id", Value: s.ReplSetName},
		{Key: "version", Value: int32(1)},
		{Key: "term", Value: int64(1)},
		{Key: "protocolVersion", Value: int64(1)},
		{Key: "members", Value: bson.A{bson.D{
			{Key: "_id", Value: int32(0)},
			{Key: "host", Value: s.Host},
			{Key: "arbiterOnly", Value: false},
			{Key: "hidden", Value: false},
			{Key: "priority", Value: 1.0},
			{Key: "votes", Value: int32(1)},
		}}},
	}}}), nil
}
