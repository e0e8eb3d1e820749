package wire

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"

	"github.com/folio-db/folio/internal/mongoerr"
)

// opQuery builds an OP_QUERY body with the driver's wiremessage helpers.
func opQuery(flags int32, ns string, skip, nReturn int32, docs ...[]byte) []byte {
	b := wiremessage.AppendQueryFlags(nil, wiremessage.QueryFlag(flags))
	b = wiremessage.AppendQueryFullCollectionName(b, ns)
	b = wiremessage.AppendQueryNumberToSkip(b, skip)
	b = wiremessage.AppendQueryNumberToReturn(b, nReturn)
	for _, d := range docs {
		b = append(b, d...)
	}
	return b
}

func TestParseQuery(t *testing.T) {
	hello := doc(t, "isMaster", 1, "client", D("driver", D("name", "test")), "compression", bson.A{"zstd", "snappy"})
	proj := doc(t, "x", 1)
	bad := bytes.Clone(proj)
	bad[4] = 0x42
	tests := []struct {
		name    string
		body    []byte
		wantErr string
		want    *Query
	}{
		{name: "handshake", body: opQuery(QuerySecondaryOK, "admin.$cmd", 0, -1, hello),
			want: &Query{Flags: QuerySecondaryOK, FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: hello}},
		{name: "with selector", body: opQuery(0, "db.c", 5, 10, hello, proj),
			want: &Query{FullCollectionName: "db.c", NumberToSkip: 5, NumberToReturn: 10, Query: hello, ReturnFieldsSelector: proj}},
		{name: "empty namespace", body: opQuery(0, "", 0, 1, proj),
			want: &Query{NumberToReturn: 1, Query: proj}},

		{name: "empty", body: nil, wantErr: "ProtocolError"},
		{name: "truncated flags", body: []byte{0, 0}, wantErr: "ProtocolError"},
		{name: "unterminated namespace", body: []byte{0, 0, 0, 0, 'a', 'd'}, wantErr: "ProtocolError"},
		{name: "truncated numbers", body: opQuery(0, "a.b", 0, 1)[:12], wantErr: "ProtocolError"},
		{name: "no query", body: opQuery(0, "a.b", 0, 1), wantErr: "InvalidBSON"},
		{name: "truncated query", body: opQuery(0, "a.b", 0, 1, hello[:len(hello)-2]), wantErr: "InvalidBSON"},
		{name: "invalid query", body: opQuery(0, "a.b", 0, 1, bad), wantErr: "InvalidBSON"},
		{name: "invalid selector", body: opQuery(0, "a.b", 0, 1, hello, bad), wantErr: "InvalidBSON"},
		{name: "oversized query", body: opQuery(0, "a.b", 0, 1, le32(MaxBSONInternalSize+1)), wantErr: "BSONObjectTooLarge"},
		{name: "garbage after query", body: opQuery(0, "a.b", 0, 1, hello, []byte{1}), wantErr: "InvalidBSON"},
		{name: "garbage after selector", body: opQuery(0, "a.b", 0, 1, hello, proj, []byte{0}), wantErr: "ProtocolError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(tt.body)
			checkErr(t, err, tt.wantErr)
			if err != nil {
				return
			}
			if q.Flags != tt.want.Flags || q.FullCollectionName != tt.want.FullCollectionName ||
				q.NumberToSkip != tt.want.NumberToSkip || q.NumberToReturn != tt.want.NumberToReturn ||
				!bytes.Equal(q.Query, tt.want.Query) || !bytes.Equal(q.ReturnFieldsSelector, tt.want.ReturnFieldsSelector) ||
				(q.ReturnFieldsSelector == nil) != (tt.want.ReturnFieldsSelector == nil) {
				t.Fatalf("got %+v\nwant %+v", q, tt.want)
			}
		})
	}
}

func TestQueryCommandDB(t *testing.T) {
	for _, tt := range []struct {
		ns, db string
		ok     bool
	}{
		{"admin.$cmd", "admin", true},
		{"app.$cmd", "app", true},
		{".$cmd", "", true},
		{"test.coll", "test", false},
		{"a.b.$cmd", "a", false}, // the collection is "b.$cmd"
		{"$cmd", "$cmd", false},
		{"invalid", "invalid", false},
		{"admin.$cmd.x", "admin", false},
	} {
		q := &Query{FullCollectionName: tt.ns}
		if db, ok := q.CommandDB(); db != tt.db || ok != tt.ok {
			t.Errorf("CommandDB(%q) = %q, %v; want %q, %v", tt.ns, db, ok, tt.db, tt.ok)
		}
	}
}

// marshal encodes d.
func marshal(t *testing.T, d bson.D) []byte {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestQueryCommand(t *testing.T) {
	secondaryPreferred := D("mode", "secondaryPreferred")
	tests := []struct {
		name    string
		flags   int32
		nReturn int32
		query   bson.D
		want    bson.D // the command, $db: "admin" appended
		wantErr string
		wantMsg string
	}{
		{name: "hello", nReturn: -1, query: D("hello", 1, "client", D("app", "x")),
			want: D("hello", 1, "client", D("app", "x"), "$db", "admin")},
		{name: "numberToReturn 1", nReturn: 1, query: D("saslStart", 1), want: D("saslStart", 1, "$db", "admin")},
		{name: "empty", nReturn: -1, query: D(), want: D("$db", "admin")},
		{name: "$query not unwrapped", nReturn: -1, query: D("$query", D("isMaster", 1)),
			want: D("$query", D("isMaster", 1), "$db", "admin")},
		{name: "secondaryOk", flags: QuerySecondaryOK, nReturn: -1, query: D("isMaster", 1),
			want: D("isMaster", 1, "$readPreference", secondaryPreferred, "$db", "admin")},
		{name: "secondaryOk with a read preference", flags: QuerySecondaryOK, nReturn: -1,
			query: D("isMaster", 1, "$readPreference", D("mode", "nearest")),
			want:  D("isMaster", 1, "$readPreference", D("mode", "nearest"), "$db", "admin")},
		{name: "$queryOptions moved", flags: QuerySecondaryOK, nReturn: -1,
			query: D("buildInfo", 1, "$queryOptions", D("$readPreference", D("mode", "primary")), "x", 1),
			want:  D("buildInfo", 1, "x", 1, "$readPreference", D("mode", "primary"), "$db", "admin")},
		{name: "$queryOptions without a read preference", flags: QuerySecondaryOK, nReturn: -1,
			query: D("buildInfo", 1, "$queryOptions", D()),
			want:  D("buildInfo", 1, "$readPreference", secondaryPreferred, "$db", "admin")},

		{name: "numberToReturn 0", nReturn: 0, query: D("isMaster", 1), wantErr: "Location16979",
			wantMsg: "Bad numberToReturn (0) for $cmd type ns - can only be 1 or -1"},
		{name: "numberToReturn 2", nReturn: 2, query: D("isMaster", 1), wantErr: "Location16979",
			wantMsg: "Bad numberToReturn (2) for $cmd type ns - can only be 1 or -1"},
		{name: "exhaust", flags: QueryExhaust, nReturn: 0, query: D("isMaster", 1, "x", "y"), wantErr: "Location18527",
			wantMsg: `The 'exhaust' OP_QUERY flag is invalid for commands: admin.$cmd { isMaster: 1, x: "y" }`},
		{name: "$db", nReturn: -1, query: D("saslStart", 1, "$db", "admin"), wantErr: "Location40621",
			wantMsg: "$db is not allowed in OP_QUERY requests"},
		{name: "two read preferences", nReturn: -1,
			query:   D("isMaster", 1, "$readPreference", D("mode", "primary"), "$queryOptions", D("$readPreference", D("mode", "primary"))),
			wantErr: "InvalidOptions", wantMsg: "Duplicate readPreference found in command object."},
		{name: "$queryOptions not an object", nReturn: -1, query: D("isMaster", 1, "$queryOptions", 1),
			wantErr: "Location10065", wantMsg: "invalid parameter: expected an object ($queryOptions)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(opQuery(tt.flags, "admin.$cmd", 0, tt.nReturn, marshal(t, tt.query)))
			if err != nil {
				t.Fatal(err)
			}
			cmd, err := q.Command("admin")
			checkErr(t, err, tt.wantErr)
			if err != nil {
				if msg := err.(*mongoerr.Error).Msg; msg != tt.wantMsg {
					t.Fatalf("message %q, want %q", msg, tt.wantMsg)
				}
				return
			}
			if want := marshal(t, tt.want); !bytes.Equal(cmd, want) {
				t.Fatalf("command %s, want %s", cmd, bson.Raw(want))
			}
		})
	}
}
