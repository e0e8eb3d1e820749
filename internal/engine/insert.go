package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// WriteError is the failure of one document of a batched write, by its
// position in the batch.
type WriteError struct {
	Index int
	Err   *mongoerr.Error
}

// insertChunk bounds how many documents one storage batch carries.
const insertChunk = 1000

// Insert stores docs in db.coll, creating the collection if needed. Ordered
// inserts stop at the first failing document; unordered ones go on and
// report every failure. It returns how many documents were stored.
func (e *Engine) Insert(db, coll string, docs []bson.Raw, ordered bool) (int, []WriteError, error) {
	c, release, err := e.writable(db, coll, true)
	if err != nil {
		return 0, nil, err
	}
	defer release()
	inserted := 0
	var werrs []WriteError
	for start := 0; start < len(docs); start += insertChunk {
		end := min(start+insertChunk, len(docs))
		n, chunkErrs, err := e.insertChunk(c, docs[start:end], start, ordered)
		inserted += n
		werrs = append(werrs, chunkErrs...)
		if err != nil {
			return inserted, werrs, err
		}
		if ordered && len(chunkErrs) > 0 {
			break
		}
	}
	if inserted > 0 {
		if err := e.durable(); err != nil {
			return 0, werrs, err
		}
	}
	return inserted, werrs, nil
}

type pendingInsert struct {
	index int
	doc   bson.Raw
	id    bson.RawValue
	key   []byte
}

func (e *Engine) insertChunk(c *Collection, docs []bson.Raw, base int, ordered bool) (int, []WriteError, error) {
	var werrs []WriteError
	pending := make([]pendingInsert, 0, len(docs))
	keys := make([][]byte, 0, len(docs))
	for i, d := range docs {
		doc, id, err := prepareInsert(d)
		if err != nil {
			werrs = append(werrs, WriteError{Index: base + i, Err: mongoerr.As(err)})
			if ordered {
				break
			}
			continue
		}
		k := docKey(c.ID, id)
		pending = append(pending, pendingInsert{index: base + i, doc: doc, id: id, key: k})
		keys = append(keys, k)
	}
	if len(pending) == 0 {
		return 0, werrs, nil
	}
	unlock := e.locks.lock(keys...)
	defer unlock()
	b := e.kv.NewBatch()
	defer b.Close()
	seen := make(map[string]struct{}, len(pending))
	n := 0
	for _, p := range pending {
		if ordered && len(werrs) > 0 && werrs[len(werrs)-1].Index < p.index {
			break
		}
		_, dupInBatch := seen[string(p.key)]
		exists := dupInBatch
		if !exists {
			_, ok, err := e.kv.Get(p.key)
			if err != nil {
				return 0, werrs, err
			}
			exists = ok
		}
		if exists {
			werrs = append(werrs, WriteError{Index: p.index, Err: duplicateIDError(c, p.id)})
			if ordered {
				break
			}
			continue
		}
		seen[string(p.key)] = struct{}{}
		if err := b.Set(p.key, p.doc); err != nil {
			return 0, werrs, err
		}
		n++
	}
	if err := e.commit(b); err != nil {
		return 0, werrs, err
	}
	sortWriteErrors(werrs)
	return n, werrs, nil
}
