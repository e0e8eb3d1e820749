package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestReloadAgainstFreshImage checks the image that reloads keep up to
// date (reusing every collection whose stored entry did not change)
// against an image built afresh from the same store: random creates,
// drops, renames, index builds and drops and validation changes, each
// reloading the image, and every few steps a reload from an empty image.
func TestReloadAgainstFreshImage(t *testing.T) {
	writer := openEngine(t, testkv.Open(t))
	r := rand.New(rand.NewPCG(7, 55))
	names := []string{"a", "b", "c", "d", "e", "f"}
	pick := func() string { return names[r.IntN(len(names))] }
	changed := 0
	for step := range 300 {
		var err error
		switch db, name := "db"+fmt.Sprint(r.IntN(2)), pick(); r.IntN(7) {
		case 0, 1:
			opts := CollectionOptions{}
			if r.IntN(4) == 0 {
				opts = CollectionOptions{Capped: true, Size: 4096}
			}
			err = writer.CreateCollection(db, name, opts)
		case 2:
			_, err = writer.DropCollection(db, name)
		case 3:
			err = writer.RenameCollection(db, name, db, pick(), r.IntN(2) == 0)
		case 4:
			key, _ := bson.Marshal(bson.D{{Key: pick(), Value: 1}})
			_, err = writer.CreateIndexes(db, name, []IndexSpec{{Name: fmt.Sprintf("ix%d", step), Key: key, ExpireAfter: -1}}, nil)
		case 5:
			if c := writer.Collection(db, name); c != nil && len(c.Indexes()) > 0 {
				_, err = writer.DropIndexes(db, name, []string{c.Indexes()[0].Name}, nil)
			}
		case 6:
			v, _ := bson.Marshal(bson.D{{Key: pick(), Value: bson.D{{Key: "$exists", Value: true}}}})
			err = writer.ModifyValidation(db, name, ValidationChange{Validator: v})
		}
		if err == nil {
			changed++ // refusals (a missing collection, a name taken) change nothing
		}
		if step%10 != 9 {
			continue
		}
		kept := map[string][]string{}
		for _, db := range []string{"db0", "db1"} {
			kept[db] = imageOf(writer, db)
		}
		writer.cat.mu.Lock()
		writer.cat.colls = nil
		err = writer.reloadLatestLocked()
		writer.cat.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		for _, db := range []string{"db0", "db1"} {
			if fresh := imageOf(writer, db); !slices.Equal(kept[db], fresh) {
				t.Fatalf("step %d, %s: reloaded image\n%v\nfresh image\n%v", step, db, kept[db], fresh)
			}
		}
	}
	if changed < 100 {
		t.Fatalf("only %d of 300 changes succeeded", changed)
	}
}

// imageOf describes db's collections as an engine's image holds them.
func imageOf(e *Engine, db string) []string {
	var out []string
	for _, c := range e.Collections(db) {
		d := fmt.Sprintf("%s id=%d uuid=%x capped=%v validator=%s", c.Name, c.ID, c.UUID, c.capped != nil, bson.Raw(c.CurrentOptions().Validator))
		for _, ix := range c.Indexes() {
			d += fmt.Sprintf(" ix(%d %s %s)", ix.ID, ix.Name, bson.Raw(ix.Spec))
		}
		out = append(out, d)
	}
	return out
}
