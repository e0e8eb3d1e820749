package instance

import (
	"bytes"
	"context"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/advise"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/oplog"
)

// TestAdviceMovedFromAdmin: the observations a build before
// local.system.advise saved in admin.system.advise are moved at startup,
// each frontend's document unless it has one in local already, loaded, and
// admin.system.advise is dropped without an oplog entry.
func TestAdviceMovedFromAdmin(t *testing.T) {
	in, err := Start(Config{Addr: "127.0.0.1:0", InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	old := advise.NewObserver()
	old.Wrote("app.c", 7)
	obs, err := old.Save()
	if err != nil {
		t.Fatal(err)
	}
	put := func(db, id string, obs bson.Raw) {
		t.Helper()
		doc, err := bson.Marshal(bson.D{{Key: "_id", Value: id}, {Key: "observations", Value: obs}})
		if err == nil {
			err = in.eng.PutOwn(db, engine.AdviseCollection, doc)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// an older build's: this frontend's, and two other frontends', one of
	// which saved in local.system.advise since
	put(engine.LegacyAdviseDB, "local", obs)
	put(engine.LegacyAdviseDB, "fe2", obs)
	put(engine.LegacyAdviseDB, "fe3", obs)
	newer, err := advise.NewObserver().Save()
	if err != nil {
		t.Fatal(err)
	}
	put(engine.AdviseDB, "fe3", newer)
	in.svc.Advisor.Reset()
	if err := in.loadAdvice(); err != nil {
		t.Fatal(err)
	}
	if got, _ := in.svc.Advisor.Save(); !bytes.Equal(got, obs) {
		t.Errorf("loaded %s, want %s", got, obs)
	}
	if in.eng.Collection(engine.LegacyAdviseDB, engine.AdviseCollection) != nil {
		t.Error("admin.system.advise is still there")
	}
	for id, want := range map[string]bson.Raw{"local": obs, "fe2": obs, "fe3": newer} {
		key, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}})
		doc, err := in.adviceDoc(engine.AdviseDB, key)
		if err != nil || !bytes.Equal(doc.Lookup("observations").Document(), want) {
			t.Errorf("%s: %s %v", id, doc, err)
		}
	}
	entries := 0
	err = in.eng.ReadOplog(0, math.MaxUint64, func(_ uint64, stored oplog.Stored) (bool, error) {
		entries++
		if e := stored.Entry(); bytes.Contains(e, []byte("system.advise")) {
			t.Errorf("logged: %s", e)
		}
		return true, nil
	})
	if err != nil || entries == 0 {
		t.Errorf("%d oplog entries read: %v", entries, err)
	}
}
