package commands

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestFailCommandSelectsHandshakeByAppName: the application name in a
// handshake's client metadata selects that handshake, as in MongoDB: a
// fresh connection's first hello naming the application is failed, one
// naming another is not, and the name stays with the connection.
func TestFailCommandSelectsHandshakeByAppName(t *testing.T) {
	s := newReplSetService(t, time.Now())
	s.TestCommands = true
	run := func(conn *Conn, cmd bson.D) bson.Raw {
		t.Helper()
		raw, err := bson.Marshal(append(cmd, bson.E{Key: "$db", Value: "admin"}))
		if err != nil {
			t.Fatal(err)
		}
		return s.Run(&Request{DB: "admin", Cmd: raw, Conn: conn})
	}
	set := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"hello", "ping"}}, {Key: "appName", Value: "app1"}, {Key: "errorCode", Value: int32(2)}}}}
	if c := code(run(&Conn{}, set)); c != 0 {
		t.Fatalf("configureFailPoint: code %d", c)
	}
	hello := func(app string) bson.D {
		return bson.D{{Key: "hello", Value: 1}, {Key: "client", Value: bson.D{{Key: "application", Value: bson.D{{Key: "name", Value: app}}},
			{Key: "driver", Value: bson.D{{Key: "name", Value: "d"}, {Key: "version", Value: "1"}}}, {Key: "os", Value: bson.D{{Key: "type", Value: "Linux"}}}}}}
	}
	mine, other := &Conn{}, &Conn{}
	if c := code(run(mine, hello("app1"))); c != 2 {
		t.Errorf("first hello of app1: code %d, want 2", c)
	}
	if c := code(run(other, hello("app2"))); c != 0 {
		t.Errorf("first hello of app2: code %d, want 0", c)
	}
	if c := code(run(mine, bson.D{{Key: "ping", Value: 1}})); c != 2 {
		t.Errorf("app1's ping: code %d, want 2", c)
	}
	if c := code(run(other, bson.D{{Key: "ping", Value: 1}})); c != 0 {
		t.Errorf("app2's ping: code %d, want 0", c)
	}
}

// TestParseFailMode reads modes as MongoDB does: times, else skip, else
// activationProbability, other fields ignored (the Go driver sends
// {times: n, skip: 0}).
func TestParseFailMode(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want failMode
		err  bool
	}{
		{mode: `{"m": "alwaysOn"}`, want: failMode{kind: failAlways}},
		{mode: `{"m": "off"}`, want: failMode{kind: failOff}},
		{mode: `{"m": {"times": 1, "skip": 0}}`, want: failMode{kind: failTimes, n: 1}},
		{mode: `{"m": {"skip": 2, "times": 3}}`, want: failMode{kind: failTimes, n: 3}},
		{mode: `{"m": {"skip": 2, "activationProbability": 0.5}}`, want: failMode{kind: failSkip, n: 2}},
		{mode: `{"m": {"times": 0}}`, want: failMode{kind: failOff}},
		{mode: `{"m": {"activationProbability": 0.5, "other": 1}}`, want: failMode{kind: failProbability, p: 0.5}},
		{mode: `{"m": {"times": -1}}`, err: true},
		{mode: `{"m": {"times": "1"}}`, err: true},
		{mode: `{"m": {"activationProbability": 2}}`, err: true},
		{mode: `{"m": {}}`, err: true},
		{mode: `{"m": {"other": 1}}`, err: true},
		{mode: `{"m": "sometimes"}`, err: true},
	} {
		var doc bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.mode), false, &doc); err != nil {
			t.Fatal(err)
		}
		got, err := parseFailMode(doc.Lookup("m"))
		if (err != nil) != tc.err || !tc.err && got != tc.want {
			t.Errorf("%s: got %+v, %v", tc.mode, got, err)
		}
	}
}
