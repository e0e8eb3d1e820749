package commands

import (
	"os"
	"runtime"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/wire"
)

// The MongoDB release whose behaviour Folio follows, and its wire version.
const (
	mongoVersion      = "7.0.0"
	maxWireVersion    = 21
	maxWriteBatchSize = 100000
)

// logicalSessionTimeoutMinutes is the session timeout hello, startSession
// and getParameter report.
const logicalSessionTimeoutMinutes = int32(sessions.DefaultTimeout / time.Minute)

func init() {
	register(helloCmd, "hello", "isMaster", "ismaster")
	register(buildInfoCmd, "buildInfo", "buildinfo")
	register(pingCmd, "ping")
	register(whatsmyuriCmd, "whatsmyuri")
	register(connectionStatusCmd, "connectionStatus")
	register(hostInfoCmd, "hostInfo")
	registerAdmin(getCmdLineOptsCmd, "getCmdLineOpts")
}

// helloCmd answers hello and its legacy spellings. The legacy forms report
// ismaster; hello reports isWritablePrimary. A client's compression list is
// answered with the compressors both sides support, in the client's order,
// and the choice is remembered for the connection.
func helloCmd(s *Service, r *Request) (bson.Raw, error) {
	name := Name(r.Cmd)
	d := bson.D{}
	if v, err := r.Cmd.LookupErr("helloOk"); err == nil && v.Type == bson.TypeBoolean && v.Boolean() {
		d = append(d, bson.E{Key: "helloOk", Value: true})
	}
	if name == "hello" {
		d = append(d, bson.E{Key: "isWritablePrimary", Value: true})
	} else {
		d = append(d, bson.E{Key: "ismaster", Value: true})
	}
	if s.ReplSetName != "" {
		d = append(d,
			bson.E{Key: "setName", Value: s.ReplSetName},
			bson.E{Key: "setVersion", Value: int32(1)},
			bson.E{Key: "hosts", Value: bson.A{s.Host}},
			bson.E{Key: "primary", Value: s.Host},
			bson.E{Key: "me", Value: s.Host},
			bson.E{Key: "secondary", Value: false},
			bson.E{Key: "electionId", Value: s.ProcessID},
		)
	}
	d = append(d,
		bson.E{Key: "maxBsonObjectSize", Value: int32(wire.MaxBSONSize)},
		bson.E{Key: "maxMessageSizeBytes", Value: int32(wire.MaxMessageSize)},
		bson.E{Key: "maxWriteBatchSize", Value: int32(maxWriteBatchSize)},
		bson.E{Key: "localTime", Value: bson.NewDateTimeFromTime(time.Now())},
		bson.E{Key: "logicalSessionTimeoutMinutes", Value: logicalSessionTimeoutMinutes},
		bson.E{Key: "connectionId", Value: number(r.Conn.ID)},
		bson.E{Key: "minWireVersion", Value: int32(0)},
		bson.E{Key: "maxWireVersion", Value: int32(maxWireVersion)},
		bson.E{Key: "readOnly", Value: false},
	)
	if v, err := r.Cmd.LookupErr("compression"); err == nil && v.Type == bson.TypeArray {
		var asked []string
		vals, _ := v.Array().Values()
		for _, c := range vals {
			if c.Type == bson.TypeString {
				asked = append(asked, c.StringValue())
			}
		}
		r.Conn.Compressors = wire.NegotiateCompressors(asked, s.Compressors)
		if len(r.Conn.Compressors) > 0 {
			d = append(d, bson.E{Key: "compression", Value: r.Conn.Compressors})
		}
	}
	return marshal(s.helloAuth(r, d)), nil
}

// buildInfoCmd answers buildInfo in MongoDB's field order. Folio speaks no
// TLS, so openssl reports "disabled" as a MongoDB built without it does.
func buildInfoCmd(s *Service, r *Request) (bson.Raw, error) {
	return marshal(bson.D{
		{Key: "version", Value: mongoVersion},
		{Key: "gitVersion", Value: "folio"},
		{Key: "modules", Value: bson.A{}},
		{Key: "allocator", Value: "go"},
		{Key: "javascriptEngine", Value: "none"},
		{Key: "sysInfo", Value: "deprecated"},
		{Key: "versionArray", Value: bson.A{int32(7), int32(0), int32(0), int32(0)}},
		{Key: "openssl", Value: bson.D{{Key: "running", Value: "disabled"}, {Key: "compiled", Value: "disabled"}}},
		{Key: "buildEnvironment", Value: bson.D{
			{Key: "target_os", Value: runtime.GOOS},
			{Key: "target_arch", Value: runtime.GOARCH},
			{Key: "go", Value: runtime.Version()},
		}},
		{Key: "bits", Value: int32(strconv.IntSize)},
		{Key: "debug", Value: false},
		{Key: "maxBsonObjectSize", Value: int32(wire.MaxBSONSize)},
		{Key: "storageEngines", Value: bson.A{"pebble"}},
	}), nil
}

func pingCmd(*Service, *Request) (bson.Raw, error) { return nil, nil }

func whatsmyuriCmd(_ *Service, r *Request) (bson.Raw, error) {
	return marshal(bson.D{{Key: "you", Value: r.Conn.Remote}}), nil
}

// connectionStatusCmd reports the connection's authenticated user, its
// roles and, with showPrivileges, its privileges.
func connectionStatusCmd(s *Service, r *Request) (bson.Raw, error) {
	show := false
	if v, err := r.Cmd.LookupErr("showPrivileges"); err == nil && v.Type == bson.TypeBoolean && v.Boolean() {
		show = true
	}
	auth, err := s.connectionStatus(r, show)
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "authInfo", Value: auth}}), nil
}

func hostInfoCmd(*Service, *Request) (bson.Raw, error) {
	host, _ := os.Hostname()
	return marshal(bson.D{
		{Key: "system", Value: bson.D{
			{Key: "currentTime", Value: bson.NewDateTimeFromTime(time.Now())},
			{Key: "hostname", Value: host},
			{Key: "cpuAddrSize", Value: int32(64)},
			{Key: "numCores", Value: int32(runtime.NumCPU())},
			{Key: "cpuArch", Value: runtime.GOARCH},
			{Key: "numaEnabled", Value: false},
		}},
		{Key: "os", Value: bson.D{{Key: "type", Value: osType()}, {Key: "name", Value: runtime.GOOS}}},
		{Key: "extra", Value: bson.D{}},
	}), nil
}

func osType() string {
	switch runtime.GOOS {
	case "linux":
		return "Linux"
	case "darwin":
		return "Darwin"
	case "windows":
		return "Windows"
	}
	return runtime.GOOS
}

func getCmdLineOptsCmd(s *Service, r *Request) (bson.Raw, error) {
	return marshal(bson.D{{Key: "argv", Value: s.Argv}, {Key: "parsed", Value: s.Parsed}}), nil
}
