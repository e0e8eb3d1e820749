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

// TestOutTargetChanged: a $out whose target changed while it ran fails
// and leaves no temporary collection. As MongoDB 7.0's
// doLocalRenameIfOptionsAndIndexesHaveNotChanged, the target's options and
// indexes must be those it had when the $out began (CommandFailed): a
// time series collection made meanwhile by another $out (its buckets are
// new) fails the second, and so do an index built and a validator set on
// a plain target. A collection made meanwhile under the name of the time
// series collection the $out creates fails it as create would
// (NamespaceExists), not with a view put over the collection or a
// DuplicateKey on system.views.
func TestOutTargetChanged(t *testing.T) {
	s := newTestService(t)
	r := &Request{DB: "test", Conn: &Conn{}, Ctx: context.Background()}
	env := engineEnv{e: s.Engine, ctx: r.Ctx, timeseries: s.outTimeseries(r)}
	tsOpts := func(spec bson.D) *timeseries.Options {
		o, err := timeseries.Parse(marshal(spec), "$out.timeseries")
		if err != nil {
			t.Fatal(err)
		}
		return &o
	}
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	measurement := marshal(bson.D{{Key: "t", Value: at}, {Key: "x", Value: 1}})
	byT := bson.D{{Key: "timeField", Value: "t"}}
	for _, tc := range []struct {
		name   string
		coll   string
		ts     *timeseries.Options
		change func(t *testing.T)
		code   mongoerr.Code
		msg    string
	}{
		{"time series made by another $out", "ts", tsOpts(byT), func(t *testing.T) {
			other, err := env.Out("test", "ts", tsOpts(byT))
			if err == nil {
				if err = other.Write([]bson.Raw{measurement}); err == nil {
					err = other.Commit()
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}, mongoerr.CommandFailed, "collection options of target collection test.system.buckets.ts changed during processing. Original options: {}, new options: { validator: "},
		{"a collection under the time series name", "ts", tsOpts(byT), func(t *testing.T) {
			if _, err := env.Insert("test", "ts", []bson.Raw{measurement}, true); err != nil {
				t.Fatal(err)
			}
		}, mongoerr.NamespaceExists, "Collection test.ts already exists."},
		{"an index built", "plain", nil, func(t *testing.T) {
			runCmd(t, s, bson.D{{Key: "createIndexes", Value: "plain"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "name", Value: "x_1"}}}}})
		}, mongoerr.CommandFailed, "indexes of target collection test.plain changed during processing."},
		{"a validator set", "plain", nil, func(t *testing.T) {
			runCmd(t, s, bson.D{{Key: "collMod", Value: "plain"}, {Key: "validator", Value: bson.D{{Key: "x", Value: 1}}}})
		}, mongoerr.CommandFailed, "collection options of target collection test.plain changed during processing. Original options: {}, new options: { validator: { x: 1 }, validationLevel: \"strict\", validationAction: \"error\" }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Engine.DropDatabase("test"); err != nil {
				t.Fatal(err)
			}
			if tc.ts == nil {
				if _, err := env.Insert("test", tc.coll, []bson.Raw{measurement}, true); err != nil {
					t.Fatal(err)
				}
			}
			out, err := env.Out("test", tc.coll, tc.ts)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t)
			err = out.Write([]bson.Raw{measurement})
			if err == nil {
				err = out.Commit()
			}
			if !mongoerr.Is(err, tc.code) || !strings.HasPrefix(mongoerr.As(err).Msg, tc.msg) {
				t.Fatalf("$out: %v, want code %d: %s", err, tc.code, tc.msg)
			}
			for _, c := range s.Engine.Collections("test") {
				if strings.Contains(c.Name, "tmp.agg_out.") {
					t.Errorf("left %s", c.Name)
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
