package commands

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestClientMetadata: a hello's client document is checked as MongoDB's
// ClientMetadata checks it (size, driver and os fields, application name
// length), and is taken only in a connection's first hello that gives one.
func TestClientMetadata(t *testing.T) {
	s := newReplSetService(t, time.Now())
	driver := bson.E{Key: "driver", Value: bson.D{{Key: "name", Value: "d"}, {Key: "version", Value: "1"}}}
	os := bson.E{Key: "os", Value: bson.D{{Key: "type", Value: "Linux"}}}
	for _, tc := range []struct {
		name   string
		client bson.D
		code   int32
	}{
		{"complete", bson.D{{Key: "application", Value: bson.D{{Key: "name", Value: "app"}}}, driver, os, {Key: "platform", Value: "x"}}, 0},
		{"too large", bson.D{driver, os, {Key: "platform", Value: strings.Repeat("x", 500)}}, 185},
		{"no driver", bson.D{os}, 183},
		{"no driver version", bson.D{{Key: "driver", Value: bson.D{{Key: "name", Value: "d"}}}, os}, 183},
		{"driver name not a string", bson.D{{Key: "driver", Value: bson.D{{Key: "name", Value: 1}, {Key: "version", Value: "1"}}}, os}, 14},
		{"driver not a document", bson.D{{Key: "driver", Value: "d"}, os}, 14},
		{"no os", bson.D{driver}, 183},
		{"os type not a string", bson.D{driver, {Key: "os", Value: bson.D{{Key: "type", Value: 1}}}}, 14},
		{"application name too long", bson.D{{Key: "application", Value: bson.D{{Key: "name", Value: strings.Repeat("a", 129)}}}, driver, os}, 184},
		{"application name not a string", bson.D{{Key: "application", Value: bson.D{{Key: "name", Value: 1}}}, driver, os}, 14},
	} {
		raw, _ := bson.Marshal(bson.D{{Key: "hello", Value: 1}, {Key: "client", Value: tc.client}, {Key: "$db", Value: "admin"}})
		if got := code(s.Run(&Request{DB: "admin", Cmd: raw, Conn: &Conn{}})); got != tc.code {
			t.Errorf("%s: code %d, want %d", tc.name, got, tc.code)
		}
	}
	conn := &Conn{}
	raw, _ := bson.Marshal(bson.D{{Key: "hello", Value: 1}, {Key: "client", Value: bson.D{driver, os}}, {Key: "$db", Value: "admin"}})
	if got := code(s.Run(&Request{DB: "admin", Cmd: raw, Conn: conn})); got != 0 {
		t.Fatalf("first hello: code %d", got)
	}
	if got := code(s.Run(&Request{DB: "admin", Cmd: raw, Conn: conn})); got != 186 {
		t.Errorf("second hello with client metadata: code %d, want 186", got)
	}
	plain, _ := bson.Marshal(bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}})
	if got := code(s.Run(&Request{DB: "admin", Cmd: plain, Conn: conn})); got != 0 {
		t.Errorf("later hello without client metadata: code %d", got)
	}
}
