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
// itself, the healthy primary.
func replSetGetStatusCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.notReplSet(); err != nil {
		return nil, err
	}
	now := time.Now()
	return marshal(bson.D{
		{Key: "set", Value: s.ReplSetName},
		{Key: "date", Value: bson.NewDateTimeFromTime(now)},
		{Key: "myState", Value: int32(1)},
		{Key: "term", Value: int64(1)},
		{Key: "members", Value: bson.A{bson.D{
			{Key: "_id", Value: int32(0)},
			{Key: "name", Value: s.Host},
			{Key: "health", Value: 1.0},
			{Key: "state", Value: int32(1)},
			{Key: "stateStr", Value: "PRIMARY"},
			{Key: "uptime", Value: int64(now.Sub(s.Started).Seconds())},
			{Key: "electionDate", Value: bson.NewDateTimeFromTime(s.Started)},
			{Key: "self", Value: true},
		}}},
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
