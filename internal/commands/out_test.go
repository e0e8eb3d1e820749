package commands

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/timeseries"
)

// TestOutTimeseriesMadeMeanwhile: two $outs that create the same time
// series collection, the second committed after the first (as two
// concurrent ones can be). As MongoDB's createTimeseriesView, a time
// series collection of the same options made meanwhile stands, the second
// $out replacing its measurements; one of other options, or a collection,
// fails the second $out with NamespaceExists. No temporary collection is
// left either way.
func TestOutTimeseriesMadeMeanwhile(t *testing.T) {
	s := newTestService(t)
	r := &Request{DB: "test", Conn: &Conn{}, Ctx: context.Background()}
	env := engineEnv{e: s.Engine, ctx: r.Ctx, timeseries: s.outTimeseries(r)}
	opts := func(spec bson.D) *timeseries.Options {
		o, err := timeseries.Parse(marshal(spec), "$out.timeseries")
		if err != nil {
			t.Fatal(err)
		}
		return &o
	}
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	measurement := func(x int32) bson.Raw { return marshal(bson.D{{Key: "t", Value: at}, {Key: "x", Value: x}}) }
	for _, tc := range []struct {
		name   string
		second *timeseries.Options
		plain  bool // a collection takes the name instead of the first $out
		code   mongoerr.Code
	}{
		{name: "same options", second: opts(bson.D{{Key: "timeField", Value: "t"}})},
		{name: "other options", second: opts(bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "m"}}), code: mongoerr.NamespaceExists},
		{name: "a collection", second: opts(bson.D{{Key: "timeField", Value: "t"}}), plain: true, code: mongoerr.NamespaceExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Engine.DropDatabase("test"); err != nil {
				t.Fatal(err)
			}
			first, err := env.Out("test", "ts", opts(bson.D{{Key: "timeField", Value: "t"}}))
			if err != nil {
				t.Fatal(err)
			}
			second, err := env.Out("test", "ts", tc.second)
			if err != nil {
				t.Fatal(err)
			}
			if tc.plain {
				first.Abort()
				if _, err := env.Insert("test", "ts", []bson.Raw{measurement(0)}, true); err != nil {
					t.Fatal(err)
				}
			} else if err := first.Write([]bson.Raw{measurement(1)}); err != nil || first.Commit() != nil {
				t.Fatal("first $out failed", err)
			}
			err = second.Write([]bson.Raw{measurement(2), measurement(3)})
			if err == nil {
				err = second.Commit()
			}
			if (err == nil) != (tc.code == 0) || (err != nil && !mongoerr.Is(err, tc.code)) {
				t.Fatalf("second $out: %v, want code %d", err, tc.code)
			}
			for _, c := range s.Engine.Collections("test") {
				if strings.Contains(c.Name, "tmp.agg_out.") {
					t.Errorf("left %s", c.Name)
				}
			}
			if tc.code == 0 {
				ts, _, err := env.timeseries("test", "ts")
				if err != nil || ts == nil {
					t.Fatalf("ts: %v %v", ts, err)
				}
				reply := runCmd(t, s, bson.D{{Key: "aggregate", Value: "ts"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}})
				if docs, _ := reply.Lookup("cursor", "firstBatch").Array().Values(); len(docs) != 2 {
					t.Errorf("ts holds %d measurements, want the second $out's 2: %s", len(docs), reply)
				}
			}
		})
	}
}

// TestOutTempName: $out writes into tmp.agg_out.<UUID>, a version 4 UUID
// as MongoDB's UUID::toString writes it (DocumentSourceOut's temporary
// collection; a duplicate key error while it fills names it).
func TestOutTempName(t *testing.T) {
	s := newTestService(t)
	env := engineEnv{e: s.Engine, ctx: context.Background()}
	out, err := env.Out("test", "target", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Abort()
	name := out.(*output).tmp
	if !regexp.MustCompile(`^tmp\.agg_out\.[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(name) {
		t.Errorf("temporary collection %q", name)
	}
	if s.Engine.Collection("test", name) == nil {
		t.Errorf("%s not created", name)
	}
}
