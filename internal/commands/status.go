package commands

import (
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(serverStatusCmd, "serverStatus")
	register(getParameterCmd, "getParameter")
	registerAdmin(getLogCmd, "getLog")
}

func serverStatusCmd(s *Service, _ *Request) (bson.Raw, error) {
	host, _ := os.Hostname()
	up := time.Since(s.Started)
	return marshal(bson.D{
		{Key: "host", Value: host},
		{Key: "version", Value: mongoVersion},
		{Key: "process", Value: "folio"},
		{Key: "pid", Value: int64(os.Getpid())},
		{Key: "uptime", Value: up.Seconds()},
		{Key: "uptimeMillis", Value: up.Milliseconds()},
		{Key: "uptimeEstimate", Value: int64(up.Seconds())},
		{Key: "localTime", Value: bson.NewDateTimeFromTime(time.Now())},
		{Key: "connections", Value: bson.D{
			{Key: "current", Value: int32(s.Connections.Load())},
			{Key: "available", Value: int32(max(s.MaxConnections-s.Connections.Load(), 0))},
			{Key: "totalCreated", Value: int32(s.TotalConns.Load())},
			{Key: "rejected", Value: int32(s.RejectedConns.Load())},
		}},
		{Key: "opcounters", Value: bson.D{
			{Key: "insert", Value: s.Ops.Insert.Load()},
			{Key: "query", Value: s.Ops.Query.Load()},
			{Key: "update", Value: s.Ops.Update.Load()},
			{Key: "delete", Value: s.Ops.Delete.Load()},
			{Key: "getmore", Value: s.Ops.GetMore.Load()},
			{Key: "command", Value: s.Ops.Command.Load()},
		}},
		{Key: "metrics", Value: bson.D{
			{Key: "cursor", Value: bson.D{{Key: "open", Value: bson.D{{Key: "total", Value: int64(s.Cursors.Len())}}}}},
		}},
		{Key: "storageEngine", Value: bson.D{{Key: "name", Value: "pebble"}, {Key: "persistent", Value: true}}},
	}), nil
}

// parameters are the server parameters getParameter reports: each one is
// true of Folio.
func parameters() bson.D {
	return bson.D{
		{Key: "featureCompatibilityVersion", Value: bson.D{{Key: "version", Value: "7.0"}}},
		{Key: "cursorTimeoutMillis", Value: cursors.DefaultIdleTimeout.Milliseconds()},
		{Key: "maxBSONDepth", Value: int32(200)},
		{Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: int64(100 * 1024 * 1024)},
		{Key: "authenticationMechanisms", Value: bson.A{}},
		{Key: "logLevel", Value: int32(0)},
		{Key: "quiet", Value: false},
	}
}

// getParameterCmd answers {getParameter: 1, name: 1, ...} with the named
// parameters and {getParameter: "*"} with all of them.
func getParameterCmd(_ *Service, r *Request) (bson.Raw, error) {
	all := parameters()
	if v := r.Cmd.Lookup("getParameter"); v.Type == bson.TypeString && v.StringValue() == "*" {
		return marshal(all), nil
	}
	var out bson.D
	err := eachArg(r.Cmd, func(key string, _ bson.RawValue) (bool, error) {
		for _, p := range all {
			if p.Key == key {
				out = append(out, p)
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "no option found to get")
	}
	return marshal(out), nil
}

// getLogCmd serves "*" (the log names), "global" (recent lines) and
// "startupWarnings" (Folio starts without warnings).
func getLogCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.Cmd.Lookup("getLog")
	if v.Type != bson.TypeString {
		return nil, wrongType("getLog", "getLog", v, "string")
	}
	switch v.StringValue() {
	case "*":
		return marshal(bson.D{{Key: "names", Value: bson.A{"global", "startupWarnings"}}}), nil
	case "global":
		lines, total := s.Recent.Lines()
		return marshal(bson.D{{Key: "totalLinesWritten", Value: int32(total)}, {Key: "log", Value: lines}}), nil
	case "startupWarnings":
		return marshal(bson.D{{Key: "totalLinesWritten", Value: int32(0)}, {Key: "log", Value: bson.A{}}}), nil
	}
	return nil, mongoerr.New(mongoerr.OperationFailed, "No log named '%s'", v.StringValue())
}
