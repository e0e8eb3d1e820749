package wire

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
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
