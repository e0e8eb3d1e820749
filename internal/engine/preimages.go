package engine

import (
	"context"
	"time"

	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage"
)

// Pre-images (changeStreamPreAndPostImages) are kept beside their oplog
// entries (oplog.Stored) and go with them when the oplog is truncated. The
// cluster parameter changeStreamOptions.preAndPostImages.expireAfterSeconds
// makes them go earlier, as MongoDB's job that removes expired pre- and
// post-images does: ExpirePreImages rewrites the entries older than a time
// without theirs. A change stream that asks for a pre-image then finds
// none (fullDocumentBeforeChange: null, or an error when required).

// expirePreImagesBatch is how many entries one storage transaction of
// ExpirePreImages rewrites.
const expirePreImagesBatch = 256

// ExpirePreImages removes the pre-images of the oplog entries whose time
// (their stamp's seconds) is before before, and returns how many entries
// it rewrote. Each pass reads the oplog from where the last one stopped;
// after a restart, from its start. On a store that stamps entries at
// commit (TiKV), an entry a dead writer's commit left to be moved into
// place later keeps its pre-images if a pass went past its stamp before.
func (e *Engine) ExpirePreImages(ctx context.Context, before time.Time) (int, error) {
	o := e.oplog
	if o == nil || before.Unix() <= 0 {
		return 0, nil
	}
	// Entries committed from now on take stamps above the last one, so
	// a pass never stops above entries yet to come.
	last, _ := o.stamps.LastStamp()
	cutoff := min(uint64(before.Unix())<<32, last+1)
	from := o.preImagesFrom.Load()
	if from >= cutoff {
		return 0, nil
	}
	var stamps []uint64
	err := scanOplog(e.kv, from, cutoff-1, false, func(stamp uint64, it storage.Iter) (bool, error) {
		if _, had := oplog.Stored(it.Value()).WithoutPreImages(); had {
			stamps = append(stamps, stamp)
		}
		return ctx.Err() == nil, nil
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return 0, err
	}
	rewritten := 0
	for len(stamps) > 0 {
		batch := stamps[:min(len(stamps), expirePreImagesBatch)]
		stamps = stamps[len(batch):]
		n, err := e.dropPreImages(ctx, batch)
		rewritten += n
		if err != nil {
			return rewritten, err
		}
	}
	o.preImagesFrom.Store(cutoff)
	return rewritten, nil
}

// dropPreImages rewrites the entries at stamps without their pre-images,
// in one transaction, under the refs lock held shared (an entry a
// truncation removed meanwhile stays removed), and returns how many it
// rewrote.
func (e *Engine) dropPreImages(ctx context.Context, stamps []uint64) (int, error) {
	unlock := e.lockRefs(true, false)
	defer unlock()
	var n int
	var freed int64
	err := e.retry(ctx, func(tx storage.Txn) error {
		n, freed = 0, 0
		for _, stamp := range stamps {
			key := oplogKey(stamp)
			v, found, err := tx.Get(key)
			if err != nil {
				return err
			}
			entry, had := oplog.Stored(v).WithoutPreImages()
			if !found || !had {
				continue
			}
			if err := tx.Set(key, entry); err != nil {
				return err
			}
			n++
			freed += int64(len(v) - len(entry))
		}
		return tx.Commit()
	})
	if err == nil {
		e.oplog.staged.Add(-freed)
	}
	return n, err
}
