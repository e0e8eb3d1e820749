package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Delete removes the documents of db.coll matching filter: all of them, or
// only the first when limit is 1. Each removal is atomic on its own. hint,
// when set, names the index to use.
func (e *Engine) Delete(db, coll string, filter bson.Raw, limit int, hint bson.RawValue, wo WriteOptions) (int64, error) {
	if err := e.userWritable(db, coll); err != nil {
		return 0, err
	}
	txn := wo.Txn
	f, err := e.writeFilter(txn, db, coll, filter, wo, false)
	if err != nil {
		return 0, err
	}
	c, err := e.writable(wo.Ctx, txn, db, coll, false, cappedInTxn)
	if err != nil || c == nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	if idHackWrite(c, f, hint, nil, false) {
		opStatsIn(wo.Ctx).noteUnplanned()
	}
	var n int64
	err = e.forEachMatch(wo.Ctx, c, writeQuery(f, wo), hint, txn, func(key []byte, examined *OpStats) (bool, error) {
		removed, _, err := e.rewrite(wo.Ctx, c, key, f, txn, wo.Record, examined, func(bson.Raw, int) (bson.Raw, change, error) {
			return nil, removed, nil
		})
		if removed && err == nil {
			n++
		}
		return err == nil && (limit != 1 || n == 0), err
	})
	if n > 0 && txn == nil {
		err = firstErr(err, e.ackDurable(wo))
	}
	return n, err
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
