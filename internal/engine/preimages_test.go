package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/folio-db/folio/internal/oplog"
)

// TestExpirePreImages: ExpirePreImages leaves the pre-images of entries
// from its time on and removes those of older ones, keeping the entries;
// a pass goes on from where the last one stopped, never above entries yet
// to come.
func TestExpirePreImages(t *testing.T) {
	e := preImagesEngine(t)
	update := func(id int) {
		t.Helper()
		if _, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, id)), Update: ext(t, `{"$inc": {"n": 1}}`), Upsert: true}); err != nil {
			t.Fatal(err)
		}
	}
	// images counts the pre-images the oplog holds (a TiKV store joins
	// concurrent commits into one entry, each operation with its own),
	// and its entries.
	images := func() (held, entries int) {
		t.Helper()
		if _, err := e.MaintainOplog(); err != nil { // TiKV's entries into place
			t.Fatal(err)
		}
		if err := e.ReadOplog(0, ^uint64(0), func(_ uint64, s oplog.Stored) (bool, error) {
			entries++
			for rest := s[len(s.Entry()):]; len(rest) > 8; held++ {
				rest = rest[4+binary.LittleEndian.Uint32(rest[4:]):]
			}
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		return held, entries
	}
	for id := range 3 {
		update(id) // an upsert: no pre-image
		update(id)
		update(id)
	}
	held, entries := images()
	if held != 6 {
		t.Fatalf("%d entries with pre-images, want 6", held)
	}
	ctx := context.Background()
	if n, err := e.ExpirePreImages(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("expiring before an hour ago rewrote %d (%v)", n, err)
	}
	if now, _ := images(); now != 6 {
		t.Fatalf("%d entries with pre-images after nothing expired", now)
	}
	if n, err := e.ExpirePreImages(ctx, time.Now().Add(time.Hour)); err != nil || n != 6 {
		t.Fatalf("expiring them all rewrote %d (%v)", n, err)
	}
	if now, all := images(); now != 0 || all != entries {
		t.Fatalf("%d entries with pre-images and %d entries after all expired, had %d", now, all, entries)
	}
	// A later entry is above where the pass stopped, though before its
	// time: the next pass removes its image.
	update(0)
	if now, _ := images(); now != 1 {
		t.Fatalf("%d entries with pre-images after a new update", now)
	}
	if n, err := e.ExpirePreImages(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("the next pass rewrote %d (%v)", n, err)
	}
	if doc := findOne(t, e, "c", `{"_id": 0}`); doc.Lookup("n").Int32() != 4 {
		t.Fatalf("the document after expiry: %s", doc)
	}
}

// TestExpirePreImagesWhileWriting: passes of ExpirePreImages running
// beside updates lose no update and leave every entry readable; a last
// pass leaves no pre-image.
func TestExpirePreImagesWhileWriting(t *testing.T) {
	e := preImagesEngine(t)
	const writers, updates = 4, 50
	ctx := context.Background()
	done := make(chan struct{})
	expired := make(chan error, 1)
	go func() {
		for {
			select {
			case <-done:
				expired <- nil
				return
			default:
			}
			if _, err := e.ExpirePreImages(ctx, time.Now().Add(time.Hour)); err != nil {
				expired <- err
				return
			}
		}
	}()
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for range updates {
				if _, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, w)), Update: ext(t, `{"$inc": {"n": 1}}`), Upsert: true}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-expired; err != nil {
		t.Fatal(err)
	}
	if _, err := e.ExpirePreImages(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.MaintainOplog(); err != nil {
		t.Fatal(err)
	}
	var held int
	if err := e.ReadOplog(0, ^uint64(0), func(_ uint64, s oplog.Stored) (bool, error) {
		if _, had := s.WithoutPreImages(); had {
			held++
		}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("%d entries keep pre-images after the last pass", held)
	}
	for w := range writers {
		if doc := findOne(t, e, "c", fmt.Sprintf(`{"_id": %d}`, w)); doc.Lookup("n").Int32() != updates {
			t.Errorf("document %d: %s", w, doc)
		}
	}
}

// preImagesEngine is a test engine with test.c recording pre-images.
func preImagesEngine(t *testing.T) *Engine {
	t.Helper()
	e := newTestEngine(t)
	if err := e.CreateCollection("test", "c", CollectionOptions{PreAndPostImages: true}); err != nil {
		t.Fatal(err)
	}
	return e
}
