package driver_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Opcode and flags of the legacy OP_QUERY and its OP_REPLY.
const (
	opQuery           = 2004
	opGetMore         = 2005
	queryExhaust      = 1 << 6
	querySecondaryOk  = 1 << 2
	replyQueryFailure = 1 << 1
	replyAwaitCapable = 1 << 3
)

// queryBody is an OP_QUERY body: flags, the namespace, numberToSkip 0,
// numberToReturn and the query document.
func queryBody(flags int32, ns string, numberToReturn int32, doc []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(flags))
	b = append(append(b, ns...), 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(numberToReturn))
	return append(b, doc...)
}

// rawQuery sends doc as an OP_QUERY on c and returns the responseFlags and
// the one document of the OP_REPLY answering it.
func rawQuery(t *testing.T, c net.Conn, requestID, flags int32, ns string, numberToReturn int32, doc bson.D) (int32, bson.Raw) {
	t.Helper()
	if _, err := c.Write(message(requestID, opQuery, queryBody(flags, ns, numberToReturn, mustRaw(t, doc)))); err != nil {
		t.Fatal(err)
	}
	replyFlags, reply, err := readOpReply(c, requestID)
	if err != nil {
		t.Fatal(err)
	}
	return replyFlags, reply
}

// readOpReply reads one OP_REPLY answering requestID and returns its
// responseFlags and its only document.
func readOpReply(c net.Conn, requestID int32) (int32, bson.Raw, error) {
	op, responseTo, body, err := readFrame(c)
	if err != nil {
		return 0, nil, err
	}
	if op != opReply || len(body) < 20+5 {
		return 0, nil, errors.New("reply is not an OP_REPLY")
	}
	if responseTo != requestID {
		return 0, nil, errors.New("reply answers another request")
	}
	flags := int32(binary.LittleEndian.Uint32(body))
	cursorID, startingFrom := binary.LittleEndian.Uint64(body[4:]), binary.LittleEndian.Uint32(body[12:])
	if n := binary.LittleEndian.Uint32(body[16:]); n != 1 || cursorID != 0 || startingFrom != 0 {
		return 0, nil, errors.New("OP_REPLY is not one document without a cursor")
	}
	doc := bson.Raw(body[20:])
	return flags, doc, doc.Validate()
}

// withoutClusterTime is reply without $clusterTime and operationTime.
func withoutClusterTime(t *testing.T, reply bson.Raw) bson.Raw {
	t.Helper()
	var d bson.D
	if err := bson.Unmarshal(reply, &d); err != nil {
		t.Fatal(err)
	}
	out := bson.D{}
	for _, e := range d {
		if e.Key != "$clusterTime" && e.Key != "operationTime" {
			out = append(out, e)
		}
	}
	return mustRaw(t, out)
}

func int32p(v int32) *int32 { return &v }

// failed is a command's error reply.
func failed(code int32, codeName, errmsg string) bson.D {
	return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: errmsg}, {Key: "code", Value: code}, {Key: "codeName", Value: codeName}}
}

// TestOpQuery: a legacy OP_QUERY to <db>.$cmd runs, as over OP_MSG, the
// commands MongoDB 7.0 still takes there (checkAllowedOpQueryCommand) and
// refuses the others (352); MongoDB's OP_QUERY checks come first (exhaust
// 18527, numberToReturn 16979, $db 40621); a legacy query (any other
// namespace) gets the {$err, code, ok} document with QueryFailure set.
// Command replies come with AwaitCapable set, as MongoDB's.
func TestOpQuery(t *testing.T) {
	_, in := startAuthServer(t)
	legacyQuery := bson.D{
		{Key: "$err", Value: "OP_QUERY is no longer supported. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal"},
		{Key: "code", Value: int32(5739101)}, {Key: "ok", Value: 0.0},
	}
	unsupported := func(name string) bson.D {
		return failed(352, "UnsupportedOpQueryCommand", "Unsupported OP_QUERY command: "+name+
			". The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal")
	}
	scramStart := bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
		{Key: "payload", Value: bson.Binary{Data: []byte("n,,n=" + rootUser + ",r=abcdefghijklmnop")}}}
	tests := []struct {
		name           string
		ns             string
		flags          int32
		numberToReturn *int32 // -1 when nil
		cmd            bson.D
		has            string // a successful reply has this field
		want           bson.D // else the reply, without $clusterTime and operationTime
		wantFlags      int32
	}{
		{name: "hello", cmd: bson.D{{Key: "hello", Value: 1}}, has: "isWritablePrimary"},
		{name: "isMaster secondaryOk", flags: querySecondaryOk, numberToReturn: int32p(1), cmd: bson.D{{Key: "isMaster", Value: 1}}, has: "ismaster"},
		{name: "ismaster", cmd: bson.D{{Key: "ismaster", Value: 1}}, has: "ismaster"},
		{name: "buildinfo", cmd: bson.D{{Key: "buildinfo", Value: 1}}, has: "version"},
		{name: "buildInfo", ns: "test.$cmd", cmd: bson.D{{Key: "buildInfo", Value: 1}}, has: "version"},
		{name: "saslStart", cmd: scramStart, has: "conversationId"},
		{name: "saslStart wrong database", ns: "wrong-auth-db.$cmd", cmd: scramStart,
			want: failed(18, "AuthenticationFailed", "Authentication failed.")},
		{name: "saslStart invalid payload", cmd: bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"}, {Key: "payload", Value: bson.Binary{Data: []byte("invalid")}}},
			want: failed(18, "AuthenticationFailed", "Authentication failed.")},
		{name: "saslContinue without saslStart", cmd: bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: 1}, {Key: "payload", Value: bson.Binary{}}},
			want: failed(17, "ProtocolError", "No SASL session state found")},
		{name: "authenticate X.509 without a certificate", ns: "$external.$cmd", cmd: bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}},
			want: failed(18, "AuthenticationFailed", "Authentication failed.")},
		// MongoDB's own _isSelf answers {id}; Folio has none, over OP_MSG either
		{name: "_isSelf", cmd: bson.D{{Key: "_isSelf", Value: 1}},
			want: failed(59, "CommandNotFound", "no such command: '_isSelf'")},

		{name: "find", cmd: bson.D{{Key: "find", Value: "c"}}, want: unsupported("find")},
		{name: "ping", cmd: bson.D{{Key: "ping", Value: 1}}, want: unsupported("ping")},
		{name: "wrapped in $query", cmd: bson.D{{Key: "$query", Value: bson.D{{Key: "isMaster", Value: 1}}}}, want: unsupported("$query")},
		{name: "empty", cmd: bson.D{}, want: unsupported("$db")},
		{name: "$db", cmd: append(scramStart, bson.E{Key: "$db", Value: "admin"}),
			want: failed(40621, "Location40621", "$db is not allowed in OP_QUERY requests")},
		{name: "numberToReturn 0", numberToReturn: int32p(0), cmd: bson.D{{Key: "ismaster", Value: 1}},
			want: failed(16979, "Location16979", "Bad numberToReturn (0) for $cmd type ns - can only be 1 or -1")},
		{name: "numberToReturn 5 before UnsupportedOpQueryCommand", numberToReturn: int32p(5), cmd: bson.D{{Key: "find", Value: "c"}},
			want: failed(16979, "Location16979", "Bad numberToReturn (5) for $cmd type ns - can only be 1 or -1")},
		{name: "exhaust", flags: queryExhaust, cmd: bson.D{{Key: "ismaster", Value: 1}},
			want: failed(18527, "Location18527", "The 'exhaust' OP_QUERY flag is invalid for commands: admin.$cmd { ismaster: 1 }")},

		{name: "query", ns: "test.coll", cmd: bson.D{{Key: "find", Value: "coll"}}, want: legacyQuery, wantFlags: replyQueryFailure},
		{name: "namespace without a dot", ns: "invalid", cmd: bson.D{{Key: "unknown", Value: 1}}, want: legacyQuery, wantFlags: replyQueryFailure},
		{name: "$cmd not the collection", ns: "a.b.$cmd", cmd: bson.D{{Key: "ismaster", Value: 1}}, want: legacyQuery, wantFlags: replyQueryFailure},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", in.Addr()) // not logged in, whatever FOLIO_TEST_AUTH says
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ns, numberToReturn := tt.ns, int32(-1)
			if ns == "" {
				ns = "admin.$cmd"
			}
			if tt.numberToReturn != nil {
				numberToReturn = *tt.numberToReturn
			}
			flags, reply := rawQuery(t, c, int32(i+1), tt.flags, ns, numberToReturn, tt.cmd)
			wantFlags := tt.wantFlags
			if wantFlags == 0 {
				wantFlags = replyAwaitCapable
			}
			if flags != wantFlags {
				t.Errorf("responseFlags %d, want %d", flags, wantFlags)
			}
			if tt.want == nil {
				if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 || reply.Lookup(tt.has).Type == 0 {
					t.Fatalf("reply %s, want ok: 1 with %s", reply, tt.has)
				}
				return
			}
			if got, want := withoutClusterTime(t, reply), mustRaw(t, tt.want); !bytes.Equal(got, want) {
				t.Fatalf("reply %s\nwant  %s", got, want)
			}
		})
	}
}

// TestOpQueryAuthenticates: a SCRAM conversation in saslStart and
// saslContinue over OP_QUERY authenticates the connection, for the
// commands it then sends over OP_MSG; a failed one does not.
func TestOpQueryAuthenticates(t *testing.T) {
	root, in := startAuthServer(t)
	if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "opq"}, {Key: "pwd", Value: "secret"},
		{Key: "roles", Value: bson.A{"read"}}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-256"}}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, db, pwd string
		continueDB    string // where saslContinue goes, db when empty
		wantCode      int32  // the conversation's failure, 0 when it succeeds
	}{
		{name: "right password", db: "app", pwd: "secret"},
		{name: "wrong password", db: "app", pwd: "wrong", wantCode: 18},
		{name: "wrong database", db: "admin", pwd: "secret", wantCode: 18},
		{name: "saslContinue on another database", db: "app", pwd: "secret", continueDB: "admin", wantCode: 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", in.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			listColls := bson.D{{Key: "listCollections", Value: 1}, {Key: "$db", Value: "app"}}
			if code, _ := rawCommand(t, c, 1, listColls).Lookup("code").Int32OK(); code != 13 {
				t.Fatalf("listCollections before authenticating: code %d, want 13", code)
			}
			client, err := scram.SHA256.NewClient("opq", tt.pwd, "")
			if err != nil {
				t.Fatal(err)
			}
			conv := client.NewConversation()
			cmd := bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"}}
			var reply bson.Raw
			var server string
			db := tt.db
			for id := int32(2); ; id++ {
				out, err := conv.Step(server)
				if err != nil {
					t.Fatalf("scram: %v", err)
				}
				var flags int32
				flags, reply = rawQuery(t, c, id, 0, db+".$cmd", -1, append(cmd, bson.E{Key: "payload", Value: bson.Binary{Data: []byte(out)}}))
				if flags != replyAwaitCapable {
					t.Fatalf("responseFlags %d", flags)
				}
				if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 || reply.Lookup("done").Boolean() {
					break
				}
				_, data := reply.Lookup("payload").Binary()
				server = string(data)
				cmd = bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: reply.Lookup("conversationId")}}
				if tt.continueDB != "" {
					db = tt.continueDB
				}
			}
			if code, _ := reply.Lookup("code").Int32OK(); code != tt.wantCode {
				t.Fatalf("conversation ended with %s, want code %d", reply, tt.wantCode)
			}
			status := rawCommand(t, c, 100, bson.D{{Key: "connectionStatus", Value: 1}, {Key: "$db", Value: "admin"}})
			users := status.Lookup("authInfo", "authenticatedUsers").String()
			code, _ := rawCommand(t, c, 101, listColls).Lookup("code").Int32OK()
			if tt.wantCode == 0 && (users != `[{"user": "opq","db": "app"}]` || code != 0) {
				t.Fatalf("after authenticating: authenticatedUsers %s, listCollections code %d", users, code)
			}
			if tt.wantCode != 0 && (users != `[]` || code != 13) {
				t.Fatalf("after a failed conversation: authenticatedUsers %s, listCollections code %d", users, code)
			}
		})
	}
}

// TestOpGetMoreRefused: MongoDB 7.0 answers a legacy OP_GET_MORE with an
// OP_REPLY refusing it (QueryFailure, code 5739101), and the connection
// goes on serving.
func TestOpGetMoreRefused(t *testing.T) {
	_, in := startServer(t)
	c := rawDial(t, in)
	body := binary.LittleEndian.AppendUint32(nil, 0)
	body = append(append(body, testDB+".c"...), 0)
	body = binary.LittleEndian.AppendUint32(body, 2)
	body = binary.LittleEndian.AppendUint64(body, 42)
	if _, err := c.Write(message(7, opGetMore, body)); err != nil {
		t.Fatal(err)
	}
	flags, reply, err := readOpReply(c, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := mustRaw(t, bson.D{{Key: "$err", Value: "OP_GET_MORE is no longer supported. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal"},
		{Key: "code", Value: int32(5739101)}, {Key: "ok", Value: 0.0}})
	if flags != replyQueryFailure || !bytes.Equal(reply, want) {
		t.Fatalf("flags %d, reply %s; want %d, %s", flags, reply, replyQueryFailure, want)
	}
	if ok := rawCommand(t, c, 8, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("ok"); ok.Double() != 1 {
		t.Fatalf("ping after the refusal: %v", ok)
	}
}
