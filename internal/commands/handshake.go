package commands

import (
	"bytes"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
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

// handshakeNames are hello's names: the commands a connection opens with,
// which may carry the client's metadata.
var handshakeNames = []string{"hello", "isMaster", "ismaster"}

// IsHandshake reports whether name is one of hello's names.
func IsHandshake(name string) bool { return slices.Contains(handshakeNames, name) }

// opQueryNames are the commands MongoDB 7.0 still takes over OP_QUERY (its
// checkAllowedOpQueryCommand): hello's names, authentication, buildInfo
// and _isSelf (which Folio does not have: CommandNotFound, as over OP_MSG).
var opQueryNames = append([]string{"_isSelf", "authenticate", "buildinfo", "buildInfo", "saslContinue", "saslStart"}, handshakeNames...)

// CheckOpQuery refuses, with UnsupportedOpQueryCommand, a command sent
// over OP_QUERY that MongoDB 7.0 no longer takes there.
func CheckOpQuery(name string) error {
	if slices.Contains(opQueryNames, name) {
		return nil
	}
	return mongoerr.New(mongoerr.UnsupportedOpQueryCommand, "Unsupported OP_QUERY command: %s. %s", name, wire.UpgradeAdvice)
}

func init() {
	register(helloCmd, helloSpec, "hello")
	register(helloCmd, helloSpec, "isMaster", "ismaster")
	register(buildInfoCmd, untyped("buildInfo"), "buildInfo", "buildinfo")
	register(pingCmd, untyped("ping"), "ping")
	register(whatsmyuriCmd, untyped("whatsmyuri"), "whatsmyuri")
	register(connectionStatusCmd, connectionStatusSpec, "connectionStatus")
	register(hostInfoCmd, untyped("hostInfo"), "hostInfo")
	registerAdmin(getCmdLineOptsCmd, untyped("getCmdLineOpts"), "getCmdLineOpts")
}

// helloSpec declares hello's fields (MongoDB's hello.idl). hello, unlike
// the other commands of API version 1, is not strict: a driver may send a
// handshake field the server does not know, and the server ignores it.
// https://www.mongodb.com/docs/v7.0/reference/command/hello/
var helloSpec = &argSpec{path: "hello", open: "MongoDB's IDL of hello is not strict: it ignores fields it does not declare, such as a newer driver's handshake fields", fields: []argField{
	arg("helloOk", tBool),
	arg("compression", tArray),
	// client is the client's metadata, which MongoDB logs; Folio keeps
	// only the application name (noteClient), neither logging the rest
	// nor showing it in currentOp.
	arg("client", tDoc),
	arg("saslSupportedMechs", tString),
	arg("speculativeAuthenticate", tDoc),
	ignore("forShell", tBool, "marks a shell's connection for MongoDB's logs"),
	ignore("hostInfo", tString, "the client's host, for MongoDB's logs"),
	ignore("hangUpOnStepDown", tBool, "a one-member replica set never steps down"),
	ignore("internalClient", tDoc, "sent by cluster members to each other"),
	// topologyVersion and maxAwaitTimeMS make hello awaitable
	// (topology.go).
	arg("topologyVersion", tDoc),
	arg("maxAwaitTimeMS", tSafe),
	refuseTrue("loadBalanced", tBool, "load balancers"),
}, subs: []*argSpec{topologyVersionSpec}}

// connectionStatusSpec declares connectionStatus's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/connectionStatus/
var connectionStatusSpec = &argSpec{path: "connectionStatus", fields: []argField{
	arg("showPrivileges", tBool),
}}

// helloCmd answers hello and its legacy spellings, in MongoDB's field
// order. The legacy forms report ismaster; hello reports isWritablePrimary.
// A client's compression list is answered with the compressors both sides
// support, in the client's order, and the choice is remembered for the
// connection. An awaitable hello (topologyVersion and maxAwaitTimeMS)
// first waits for the topology to change (topology.go); asked with
// exhaustAllowed, it streams: the server runs it again for each next reply.
func helloCmd(s *Service, r *Request) (bson.Raw, error) {
	if name, ok := r.args.value("saslSupportedMechs").StringValueOK(); ok && !strings.Contains(name, ".") {
		// the IDL's UserName
		return nil, mongoerr.New(mongoerr.BadValue, "UserName must contain a '.' separated database.user pair")
	}
	tv, err := parseTopologyVersion(r)
	if err != nil {
		return nil, err
	}
	if tv.raw != nil {
		if r.awaited, err = s.awaitTopologyChange(r, tv, r.args.safeInt("maxAwaitTimeMS")); err != nil {
			return nil, err
		}
	}
	name := Name(r.Cmd)
	primary := "isWritablePrimary"
	if name != "hello" {
		primary = "ismaster"
	}
	st := s.state()
	d := bson.D{}
	if r.args.bool("helloOk") {
		d = append(d, bson.E{Key: "helloOk", Value: true})
		if r.Conn != nil {
			r.Conn.HelloOk = true
		}
	}
	if s.ReplSetName != "" {
		d = append(d, bson.E{Key: "topologyVersion", Value: st.version(s)})
		d = append(d, s.memberFields(st, primary)...)
	} else {
		d = append(d, bson.E{Key: primary, Value: true}, bson.E{Key: "topologyVersion", Value: st.version(s)})
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
	if desc := s.automationDescriptor(); desc != nil {
		d = append(d, bson.E{Key: "automationServiceDescriptor", Value: desc})
	}
	if v := r.args.value("compression"); v.Type == bson.TypeArray {
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
	if r.ExhaustAllowed {
		if tv.raw == nil {
			return nil, mongoerr.New(mongoerr.ExhaustHelloWithoutMaxAwait, "An isMaster or hello request with exhaust must specify 'maxAwaitTimeMS'")
		}
		r.Next = withField(r.Cmd, "topologyVersion", marshal(st.version(s)))
		kind := exhaustHello
		if name != "hello" {
			kind = exhaustIsMaster
		}
		s.Hello.setExhaust(r.Conn, kind)
	}
	return marshal(s.helloAuth(r, d)), nil
}

// parseTopologyVersion reads an awaitable hello's topologyVersion, nil
// (raw) when the hello is not awaitable. MongoDB checks the IDL's types
// first (maxAwaitTimeMS: a number, at least 0), then the counter's sign,
// then that the two fields come together.
func parseTopologyVersion(r *Request) (cmdArgs, error) {
	var tv cmdArgs
	doc := r.args.doc("topologyVersion")
	if doc != nil {
		var err error
		if tv, err = parseSub(doc, topologyVersionSpec); err != nil {
			return tv, err
		}
	}
	maxAwait := r.args.value("maxAwaitTimeMS")
	if maxAwait.Type != 0 {
		if err := nonNegative("hello.maxAwaitTimeMS", r.args.safeInt("maxAwaitTimeMS")); err != nil {
			return tv, err
		}
	}
	switch {
	case doc != nil && maxAwait.Type != 0:
		if tv.value("counter").Int64() < 0 {
			return tv, mongoerr.New(mongoerr.TopologyVersionNegativeCounter, "topologyVersion must have a non-negative counter")
		}
		return tv, nil
	case doc != nil:
		return tv, mongoerr.New(mongoerr.AwaitableHelloIncomplete, "A request with a 'topologyVersion' must include 'maxAwaitTimeMS'")
	case maxAwait.Type != 0:
		return tv, mongoerr.New(mongoerr.AwaitableHelloIncomplete, "A request with 'maxAwaitTimeMS' must include a 'topologyVersion'")
	}
	return cmdArgs{}, nil
}

// buildInfoCmd answers buildInfo in MongoDB's field order. The JavaScript
// engine is named whether or not it is enabled, as MongoDB names mozjs;
// TLS is Go's crypto/tls, not OpenSSL.
func buildInfoCmd(s *Service, r *Request) (bson.Raw, error) {
	return marshal(buildInfo()), nil
}

// buildInfo is buildInfo's reply, which local.startup_log also records.
func buildInfo() bson.D {
	return bson.D{
		{Key: "version", Value: mongoVersion},
		{Key: "gitVersion", Value: "folio"},
		{Key: "modules", Value: bson.A{}},
		{Key: "allocator", Value: "go"},
		{Key: "javascriptEngine", Value: "goja"},
		{Key: "sysInfo", Value: "deprecated"},
		{Key: "versionArray", Value: bson.A{int32(7), int32(0), int32(0), int32(0)}},
		{Key: "openssl", Value: bson.D{{Key: "running", Value: "Go crypto/tls"}, {Key: "compiled", Value: "Go crypto/tls"}}},
		{Key: "buildEnvironment", Value: bson.D{
			{Key: "target_os", Value: runtime.GOOS},
			{Key: "target_arch", Value: runtime.GOARCH},
			{Key: "go", Value: runtime.Version()},
		}},
		{Key: "bits", Value: int32(strconv.IntSize)},
		{Key: "debug", Value: false},
		{Key: "maxBsonObjectSize", Value: int32(wire.MaxBSONSize)},
		{Key: "storageEngines", Value: bson.A{"pebble"}},
	}
}

func pingCmd(*Service, *Request) (bson.Raw, error) { return nil, nil }

func whatsmyuriCmd(_ *Service, r *Request) (bson.Raw, error) {
	return marshal(bson.D{{Key: "you", Value: r.Conn.Remote}}), nil
}

// connectionStatusCmd reports the connection's authenticated user, its
// roles and, with showPrivileges, its privileges.
func connectionStatusCmd(s *Service, r *Request) (bson.Raw, error) {
	auth, err := s.connectionStatus(r, r.args.bool("showPrivileges"))
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "authInfo", Value: auth}}), nil
}

func hostInfoCmd(s *Service, _ *Request) (bson.Raw, error) {
	host := s.prettyHostName()
	return marshal(bson.D{
		{Key: "system", Value: append(append(bson.D{
			{Key: "currentTime", Value: bson.NewDateTimeFromTime(time.Now())},
			{Key: "hostname", Value: host},
			{Key: "cpuAddrSize", Value: int32(64)},
		}, hostMemory()...), bson.D{
			{Key: "numCores", Value: int32(runtime.NumCPU())},
			{Key: "cpuArch", Value: runtime.GOARCH},
			{Key: "numaEnabled", Value: false},
		}...)},
		{Key: "os", Value: osInfo()},
		{Key: "extra", Value: bson.D{}},
	}), nil
}

// osInfo is hostInfo's os: its type, its name and its version, which
// MongoDB reads on Linux from /etc/os-release (PRETTY_NAME) and the
// kernel's release ("Kernel <release>").
func osInfo() bson.D {
	name, version := runtime.GOOS, ""
	if runtime.GOOS == "linux" {
		if b, err := os.ReadFile("/etc/os-release"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
					name = strings.Trim(v, `"'`)
				}
			}
		}
		if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			version = "Kernel " + strings.TrimSpace(string(b))
		}
	}
	return bson.D{{Key: "type", Value: osType()}, {Key: "name", Value: name}, {Key: "version", Value: version}}
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

// noteClient checks a handshake's client metadata as MongoDB's
// ClientMetadata does and records its application name
// (client.application.name) on the connection. Run calls it before the
// fail points, as MongoDB reads the metadata before its failCommand fail
// point selects connections by application name.
func noteClient(r *Request, name string) error {
	if !IsHandshake(name) || r.Conn == nil {
		return nil
	}
	client, ok := r.args.value("client").DocumentOK()
	if !ok {
		return nil
	}
	if r.Conn.Described {
		return mongoerr.New(mongoerr.ClientMetadataCannotBeMutated, "The client metadata document may only be sent in the first hello")
	}
	app, err := checkClientMetadata(client)
	if err != nil {
		return err
	}
	r.Conn.AppName, r.Conn.Described = app, true
	r.Conn.metadata.Store(&clientMetadata{appName: app, doc: bytes.Clone(client)})
	return nil
}

// clientMetadata is a connection's client metadata as currentOp reports
// it: the application name (empty for none) and the document.
type clientMetadata struct {
	appName string
	doc     bson.Raw
}

// Limits of a client's metadata (MongoDB's ClientMetadata).
const (
	maxClientMetadataSize = 512
	maxAppNameSize        = 128
)

// checkClientMetadata validates a handshake's client document: at most
// 512 bytes, driver.name and driver.version strings, os.type a string,
// application.name (optional) a string of at most 128 bytes; other fields
// are free. It returns the application name.
func checkClientMetadata(doc bson.Raw) (string, error) {
	if len(doc) > maxClientMetadataSize {
		return "", mongoerr.New(mongoerr.ClientMetadataDocumentTooLarge, "The client metadata document must be less then or equal to %d bytes", maxClientMetadataSize)
	}
	section := func(name string, required ...string) error {
		v := doc.Lookup(name)
		sub, ok := v.DocumentOK()
		if !ok {
			if v.Type == 0 {
				return mongoerr.New(mongoerr.ClientMetadataMissingField, "Missing required sub-document '%s' in the client metadata document", name)
			}
			return mongoerr.New(mongoerr.TypeMismatch, "The '%s' field is required to be a BSON document in the client metadata document", name)
		}
		for _, f := range required {
			switch v := sub.Lookup(f); v.Type {
			case bson.TypeString:
			case 0:
				return mongoerr.New(mongoerr.ClientMetadataMissingField, "Missing required field '%s.%s' in the client metadata document", name, f)
			default:
				return mongoerr.New(mongoerr.TypeMismatch, "The '%s.%s' field must be a string in the client metadata document", name, f)
			}
		}
		return nil
	}
	var app string
	if v := doc.Lookup("application"); v.Type != 0 {
		sub, ok := v.DocumentOK()
		if !ok {
			return "", mongoerr.New(mongoerr.TypeMismatch, "The 'application' field is required to be a BSON document in the client metadata document")
		}
		if n := sub.Lookup("name"); n.Type != 0 {
			if app, ok = n.StringValueOK(); !ok {
				return "", mongoerr.New(mongoerr.TypeMismatch, "The 'application.name' field must be a string in the client metadata document")
			}
			if len(app) > maxAppNameSize {
				return "", mongoerr.New(mongoerr.ClientMetadataAppNameTooLarge, "The 'application.name' field must be less then or equal to %d bytes in the client metadata document", maxAppNameSize)
			}
		}
	}
	if err := section("driver", "name", "version"); err != nil {
		return "", err
	}
	if err := section("os", "type"); err != nil {
		return "", err
	}
	return app, nil
}
