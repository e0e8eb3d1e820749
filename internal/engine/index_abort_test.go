package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
)

// TestDropIndexesAbortsBuild runs dropIndexes while a build of a_1 and b_1
// waits between two backfill batches, beside a public x_1. Naming every
// index of the build (by name, "*", or the key pattern of a one-index
// build) aborts it as MongoDB does: dropIndexes succeeds counting the
// indexes being built in nIndexesWas, the createIndexes fails with
// IndexBuildAborted, and neither an index nor an entry of the build is
// left; the same build then runs again to the end. Meanwhile listIndexes,
// collStats' indexBuilds and its indexSizes show the indexes being built. Naming part of the
// build fails with BackgroundOperationInProgressForNamespace and leaves
// it to finish.
func TestDropIndexesAbortsBuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build []string // key patterns
		names []string
		key   string
		// want is dropIndexes' error code (0: none); kept are the
		// secondary indexes left once the build returned
		want int32
		kept []string
		// logged are the commands the oplog holds from the build's
		// start to its end (see commandsLogged)
		logged []string
	}{
		{name: "every index of the build", build: []string{`{"a": 1}`, `{"b": 1}`}, names: []string{"b_1", "a_1"}, kept: []string{"x_1"},
			logged: []string{"startIndexBuild a_1,b_1", "abortIndexBuild a_1,b_1 276 IndexBuildAborted: dropIndexes command"}},
		{name: "wildcard", build: []string{`{"a": 1}`, `{"b": 1}`}, names: []string{"*"},
			logged: []string{"startIndexBuild a_1,b_1", "abortIndexBuild a_1,b_1 276 IndexBuildAborted: dropIndexes command", "dropIndexes x_1"}},
		{name: "key pattern", build: []string{`{"a": 1}`}, key: `{"a": 1}`, kept: []string{"x_1"},
			logged: []string{"startIndexBuild a_1", "abortIndexBuild a_1 276 IndexBuildAborted: dropIndexes command"}},
		{name: "part of the build", build: []string{`{"a": 1}`, `{"b": 1}`}, names: []string{"a_1"},
			want: int32(mongoerr.BackgroundOperationInProgressForNamespace), kept: []string{"x_1", "a_1", "b_1"},
			logged: []string{"startIndexBuild a_1,b_1", "commitIndexBuild a_1,b_1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(t)
			insertTwoBuildBatches(t, e, "c")
			mustCreateIndex(t, e, "c", `{"x": 1}`, false)
			from := oplogEnd(t, e)
			var specs []IndexSpec
			for _, k := range tc.build {
				specs = append(specs, IndexSpec{Key: ext(t, k), ExpireAfter: -1})
			}
			release, built := buildHeld(t, e, specs)
			c := e.Collection("test", "c")
			ids := indexIDs(c.underConstruction())
			listed := []string{"x_1"}
			for _, spec := range specs {
				listed = append(listed, DefaultIndexName(spec.Key))
			}
			if got := indexNames(c.Listed()); !slices.Equal(got, listed) {
				t.Errorf("listIndexes during the build: %v, want %v", got, listed)
			}
			st, err := e.Stats(c)
			if err != nil || !slices.Equal(st.Builds, listed[1:]) {
				t.Errorf("collStats' indexBuilds during the build: %v (%v), want %v", st.Builds, err, listed[1:])
			}
			var sized []string
			for _, ix := range st.IndexSizes {
				sized = append(sized, ix.Name)
			}
			if want := append([]string{"_id_"}, listed...); !slices.Equal(sized, want) {
				t.Errorf("collStats' indexSizes during the build: %v, want %v", sized, want)
			}
			var key []byte
			if tc.key != "" {
				key = ext(t, tc.key)
			}
			was, err := e.DropIndexes("test", "c", tc.names, key)
			release()
			buildErr := <-built
			if code := codeOf(err); code != tc.want {
				t.Fatalf("dropIndexes: %v, want code %d", err, tc.want)
			}
			if want := 2 + len(tc.build); was != want {
				t.Errorf("nIndexesWas %d, want %d", was, want)
			}
			if tc.want == 0 && !mongoerr.Is(buildErr, mongoerr.IndexBuildAborted) {
				t.Errorf("the aborted build: %v, want IndexBuildAborted", buildErr)
			}
			if tc.want != 0 && buildErr != nil {
				t.Errorf("the build dropIndexes left: %v", buildErr)
			}
			if got := commandsLogged(t, e, from); e.oplog != nil && !slices.Equal(got, tc.logged) {
				t.Errorf("logged %q, want %q", got, tc.logged)
			}
			kept := indexNames(c.Indexes())
			if len(c.Building()) != 0 || !slices.Equal(kept, tc.kept) {
				t.Fatalf("indexes %v with %d building, want %v", kept, len(c.Building()), tc.kept)
			}
			for _, id := range ids {
				if lo, hi := indexSpan(c.ID, id); tc.want == 0 && countKeys(t, e, lo, hi) != 0 {
					t.Errorf("entries left under the aborted index %d", id)
				}
			}
			if tc.want == 0 {
				if _, err := e.CreateIndexes("test", "c", specs, nil); err != nil {
					t.Fatalf("the build again: %v", err)
				}
			}
			res := mustValidate(t, e, "c")
			for _, ix := range c.Indexes() {
				if res.KeysPerIndex[ix.Name] != res.Records {
					t.Errorf("%s holds %d keys for %d documents", ix.Name, res.KeysPerIndex[ix.Name], res.Records)
				}
			}
		})
	}
}

// buildHeld starts a build of specs on test.c through e that waits after
// its first backfill batch until release is called, and returns once it
// waits; built then gives the build's result.
func buildHeld(t *testing.T, e *Engine, specs []IndexSpec) (release func(), built <-chan error) {
	t.Helper()
	held, rel := make(chan struct{}), make(chan struct{})
	out := make(chan error, 1)
	go func() {
		first := true
		_, err := e.CreateIndexes("test", "c", specs, func(done, total int64) error {
			if first && done > 0 && done < total {
				first = false
				close(held)
				<-rel
			}
			return nil
		})
		out <- err
	}()
	select {
	case <-held:
	case err := <-out:
		t.Fatalf("the build ended before its first batch was done: %v", err)
	}
	return func() { close(rel) }, out
}

// codeOf is err's MongoDB code, 0 for none.
func codeOf(err error) int32 {
	if err == nil {
		return 0
	}
	if me := mongoerr.As(err); me != nil {
		return int32(me.Code)
	}
	return -1
}

func indexNames(ixs []*Index) []string {
	var out []string
	for _, ix := range ixs {
		out = append(out, ix.Name)
	}
	return out
}

// TestFrontendsDropIndexesAbortsBuild aborts, by a dropIndexes on one
// frontend, the build another frontend runs: the builder's createIndexes
// fails with IndexBuildAborted once its next batch finds the build
// retired, and no frontend is left with the index or its entries.
func TestFrontendsDropIndexesAbortsBuild(t *testing.T) {
	fe := openFrontends(t, 2, 3*time.Second)
	dropper, builder := fe[0], fe[1]
	insertTwoBuildBatches(t, builder, "c")
	from := oplogEnd(t, dropper)
	release, built := buildHeld(t, builder, []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}})
	c := builder.Collection("test", "c")
	ids := indexIDs(c.underConstruction())
	_, err := dropper.DropIndexes("test", "c", []string{"a_1"}, nil)
	release()
	if err != nil {
		t.Fatalf("dropIndexes on the other frontend: %v", err)
	}
	if err := <-built; !mongoerr.Is(err, mongoerr.IndexBuildAborted) {
		t.Fatalf("the aborted build: %v, want IndexBuildAborted", err)
	}
	want := []string{"startIndexBuild a_1", "abortIndexBuild a_1 276 IndexBuildAborted: dropIndexes command"}
	if got := commandsLogged(t, dropper, from); dropper.oplog != nil && !slices.Equal(got, want) {
		t.Errorf("logged %q, want %q", got, want)
	}
	for i, e := range fe {
		c := e.Collection("test", "c")
		if c.FindIndex("a_1") != nil || len(c.Building()) != 0 {
			t.Errorf("frontend %d still has a_1", i)
		}
		if res := mustValidate(t, e, "c"); len(res.KeysPerIndex) != 1 {
			t.Errorf("frontend %d: indexes %v", i, res.KeysPerIndex)
		}
	}
	for _, id := range ids {
		if lo, hi := indexSpan(c.ID, id); countKeys(t, dropper, lo, hi) != 0 {
			t.Errorf("entries left under the aborted index %d", id)
		}
	}
}

// TestDropIndexesNameTwice: an index named twice in one dropIndexes is
// not found the second time, as in MongoDB's dropReadyIndexes, which drops
// the names one after the other in one unit of work; the drop fails with
// IndexNotFound and drops nothing. A list starting with "*" drops every
// index, its other names unread.
func TestDropIndexesNameTwice(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "c", `{"x": 1}`, false)
	mustCreateIndex(t, e, "c", `{"y": 1}`, false)
	_, err := e.DropIndexes("test", "c", []string{"y_1", "x_1", "x_1"}, nil)
	if me := mongoerr.As(err); me == nil || me.Code != mongoerr.IndexNotFound || me.Msg != "index not found with name [x_1]" {
		t.Fatalf("dropIndexes [y_1, x_1, x_1]: %v", err)
	}
	if n := len(e.Collection("test", "c").Indexes()); n != 2 {
		t.Fatalf("%d indexes left, want 2", n)
	}
	if was, err := e.DropIndexes("test", "c", []string{"*", "nope"}, nil); err != nil || was != 3 {
		t.Fatalf("dropIndexes [*, nope]: %d, %v", was, err)
	}
	if n := len(e.Collection("test", "c").Indexes()); n != 0 {
		t.Fatalf("%d indexes left after [*, nope]", n)
	}
}

// TestDropAbortsBuild drops the collection, or its database, while a
// build of a_1 waits between two backfill batches and a second request
// for the same index waits for that build: as in MongoDB, the drop
// succeeds and aborts the build, whose createIndexes fails with
// IndexBuildAborted, as does the request waiting for it, and nothing of
// the collection is left. A createIndexes after the drop creates the
// collection again.
func TestDropAbortsBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop func(e *Engine) error
		// logged are the commands logged from the build's start on,
		// %s standing for the collection's UUID
		logged []string
	}{
		{"collection", func(e *Engine) error { _, err := e.DropCollection("test", "c"); return err },
			[]string{"startIndexBuild a_1", "abortIndexBuild a_1 276 IndexBuildAborted: Collection test.c(%s) is being dropped", "drop c"}},
		{"database", func(e *Engine) error { return e.DropDatabase("test") },
			[]string{"startIndexBuild a_1", "abortIndexBuild a_1 276 IndexBuildAborted: dropDatabase command", "drop c", "dropDatabase"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(t)
			insertTwoBuildBatches(t, e, "c")
			from := oplogEnd(t, e)
			specs := []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}
			release, built := buildHeld(t, e, specs)
			c := e.Collection("test", "c")
			joined := make(chan error, 1)
			go func() {
				_, err := e.CreateIndexes("test", "c", specs, nil)
				joined <- err
			}()
			stillWaiting(t, joined)
			err := tc.drop(e)
			release()
			if err != nil {
				t.Fatalf("the drop: %v", err)
			}
			if err := <-built; !mongoerr.Is(err, mongoerr.IndexBuildAborted) {
				t.Errorf("the build the drop aborted: %v, want IndexBuildAborted", err)
			}
			if err := <-joined; !mongoerr.Is(err, mongoerr.IndexBuildAborted) {
				t.Errorf("the request waiting for that build: %v, want IndexBuildAborted", err)
			}
			if e.Collection("test", "c") != nil {
				t.Fatal("the dropped collection is back")
			}
			want := slices.Clone(tc.logged)
			want[1] = strings.Replace(want[1], "%s", uuidString(c.UUID), 1)
			if got := commandsLogged(t, e, from); e.oplog != nil && !slices.Equal(got, want) {
				t.Errorf("logged %q, want %q", got, want)
			}
			awaitGarbage(t, e)
			for _, span := range collSpans(c.ID) {
				if n := countKeys(t, e, span[0], span[1]); n != 0 {
					t.Errorf("%d keys of the dropped collection are left in [%x, %x)", n, span[0], span[1])
				}
			}
			res, err := e.CreateIndexes("test", "c", specs, nil)
			if err != nil || !res.CreatedCollection || res.After != 2 {
				t.Fatalf("createIndexes after the drop: %+v, %v", res, err)
			}
		})
	}
}

// oplogEnd is the stamp after the last entry of e's oplog.
func oplogEnd(t *testing.T, e *Engine) uint64 {
	t.Helper()
	if e.oplog == nil {
		return 0
	}
	if _, err := e.MaintainOplog(); err != nil { // TiKV's entries into place
		t.Fatal(err)
	}
	var end uint64
	if err := e.ReadOplog(0, ^uint64(0), func(stamp uint64, _ oplog.Stored) (bool, error) {
		end = stamp + 1
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return end
}

// commandsLogged shows each command entry of e's oplog from stamp from
// on as its command and its argument: for a build's entries, the names of
// its indexes and, for an abort, its cause's code, codeName and errmsg. A
// commit's or an abort's indexBuildUUID must be the one of a
// startIndexBuild before it naming the same indexes. The commands of an
// applyOps entry (one commit's several entries on a store that stamps a
// commit once, TiKV) are shown one by one.
func commandsLogged(t *testing.T, e *Engine, from uint64) []string {
	t.Helper()
	if e.oplog == nil {
		return nil
	}
	if _, err := e.MaintainOplog(); err != nil {
		t.Fatal(err)
	}
	var out []string
	started := map[string]string{} // indexBuildUUID: names
	var show func(ent bson.Raw)
	show = func(ent bson.Raw) {
		if ent.Lookup("op").StringValue() != "c" {
			return
		}
		o := ent.Lookup("o").Document()
		first, err := o.IndexErr(0)
		if err != nil {
			t.Fatal(err)
		}
		if ops, ok := o.Lookup("applyOps").ArrayOK(); ok {
			vals, _ := ops.Values()
			for _, v := range vals {
				show(v.Document())
			}
			return
		}
		row := first.Key()
		if name, ok := first.Value().StringValueOK(); ok {
			row += " " + name
		}
		if _, b, ok := o.Lookup("indexBuildUUID").BinaryOK(); ok {
			var names []string
			vals, _ := o.Lookup("indexes").Array().Values()
			for _, v := range vals {
				names = append(names, v.Document().Lookup("name").StringValue())
			}
			row = first.Key() + " " + strings.Join(names, ",")
			if first.Key() == "startIndexBuild" {
				started[string(b)] = row[len(first.Key()):]
			} else if started[string(b)] != row[len(first.Key()):] {
				t.Errorf("%s under indexBuildUUID %x, which no startIndexBuild of the same indexes has", row, b)
			}
			if cause, ok := o.Lookup("cause").DocumentOK(); ok {
				row += fmt.Sprintf(" %d %s: %s", cause.Lookup("code").Int32(), cause.Lookup("codeName").StringValue(), cause.Lookup("errmsg").StringValue())
			}
		} else if idx, ok := o.Lookup("index").StringValueOK(); ok {
			row = first.Key() + " " + idx
		}
		out = append(out, row)
	}
	if err := e.ReadOplog(from, ^uint64(0), func(_ uint64, s oplog.Stored) (bool, error) {
		show(s.Entry())
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
