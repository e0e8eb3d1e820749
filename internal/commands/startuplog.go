package commands

import (
	"context"
	"os"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
)

// startupLogSize is local.startup_log's capped size, MongoDB's 10 MB.
const startupLogSize = 10 << 20

// LogStartup records the server's start in local.startup_log, as mongod's
// logStartup does at each start: a capped collection (made on first use)
// with one document per start, _id the host name and the start's
// milliseconds, the start time in seconds and as ctime text in local
// time, getCmdLineOpts' parsed options, the process id and buildInfo.
func (s *Service) LogStartup() error {
	host, _ := os.Hostname()
	now := time.Now()
	doc, err := bson.Marshal(bson.D{
		{Key: "_id", Value: host + "-" + strconv.FormatInt(now.UnixMilli(), 10)},
		{Key: "hostname", Value: host},
		{Key: "startTime", Value: bson.NewDateTimeFromTime(now.Truncate(time.Second))},
		{Key: "startTimeLocal", Value: now.Local().Format("Mon Jan _2 15:04:05.000")},
		{Key: "cmdLine", Value: s.Parsed},
		{Key: "pid", Value: int64(os.Getpid())},
		{Key: "buildinfo", Value: buildInfo()},
	})
	if err != nil {
		return err
	}
	opts := engine.CollectionOptions{Capped: true, Size: startupLogSize}
	if err := s.Engine.CreateCollection("local", "startup_log", opts); err != nil {
		return err
	}
	_, werrs, err := s.Engine.Insert("local", "startup_log", []bson.Raw{doc}, true, engine.WriteOptions{Ctx: context.Background()})
	if err == nil && len(werrs) > 0 {
		err = werrs[0].Err
	}
	return err
}
