package engine

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ExpireTTL deletes the documents that TTL indexes say have expired: those
// whose indexed field is a date (or an array holding one) no later than now
// minus the index's expireAfterSeconds, in a clustered collection with
// expireAfterSeconds those whose _id is such a date, and in a time series
// collection's buckets those whose newest measurement is that old. It returns how many
// it deleted.
// Only the frontend holding the jobs lease (jobs_lease.go) deletes; it
// stops between indexes once it lost the lease.
func (e *Engine) ExpireTTL(now time.Time) (int64, error) {
	var total int64
	if !e.RunsJobs() {
		return 0, nil
	}
	e.cat.mu.RLock()
	colls := make([]*Collection, 0, len(e.cat.colls))
	for _, c := range e.cat.colls {
		colls = append(colls, c)
	}
	e.cat.mu.RUnlock()
	for _, c := range colls {
		if e.CheckUserWrite(context.Background(), c.DB, c.Name) != nil {
			// While user writes are blocked, MongoDB's TTL monitor fails
			// the deletions of user collections and goes on.
			continue
		}
		if ttl := c.ttl.Load(); ttl != nil {
			path := "_id"
			if ts := c.Options.Timeseries; ts != nil {
				// A time series bucket expires with its newest measurement.
				path = "control.max." + ts.Lookup("timeField").StringValue()
			}
			n, err := e.expireBefore(c, path, now.Add(-time.Duration(*ttl)*time.Second))
			total += n
			if err != nil {
				return total, err
			}
		}
		for _, ix := range c.Indexes() {
			if ix.ExpireAfter < 0 || !ix.expiresByTTL() {
				continue
			}
			if !e.RunsJobs() {
				return total, nil
			}
			n, err := e.expireThrough(c, ix, now.Add(-time.Duration(ix.ExpireAfter)*time.Second))
			total += n
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// expireBefore deletes c's documents whose field path is a date at or
// before cutoff: MongoDB's TTL deletion range is [the dawn of time,
// now - expireAfterSeconds], both ends included.
func (e *Engine) expireBefore(c *Collection, path string, cutoff time.Time) (int64, error) {
	filter, err := bson.Marshal(bson.D{{Key: path, Value: bson.D{{Key: "$lte", Value: bson.NewDateTimeFromTime(cutoff)}}}})
	if err != nil {
		return 0, err
	}
	return e.expire(c, filter, bson.RawValue{}, nil, "")
}

// expireThrough deletes the documents TTL index ix holds whose date is at
// or before cutoff. MongoDB's TTL monitor scans the index, hidden or not,
// so a document outside a partial index's filter never expires: the
// filter carries the index's partial filter, under the index's
// collation, and the index is hinted unless hidden (the planner may not
// use a hidden index; the documents are then found by a scan).
//
// On a time series collection's buckets (a partial TTL index keyed on
// control.min.<timeField>), a bucket expires, as under the collection's
// expireAfterSeconds, once its newest measurement is that old.
func (e *Engine) expireThrough(c *Collection, ix *Index, cutoff time.Time) (int64, error) {
	date := bson.D{{Key: "$lte", Value: bson.NewDateTimeFromTime(cutoff)}}
	cond := bson.D{{Key: ix.Fields[0].Path, Value: date}}
	if ts := c.Options.Timeseries; ts != nil {
		cond = append(cond, bson.E{Key: "control.max." + ts.Lookup("timeField").StringValue(), Value: date})
	}
	var filter []byte
	var err error
	if pf := ix.Spec.Lookup("partialFilterExpression"); pf.Type == bson.TypeEmbeddedDocument {
		filter, err = bson.Marshal(bson.D{{Key: "$and", Value: bson.A{cond, pf.Document()}}})
	} else {
		filter, err = bson.Marshal(cond)
	}
	if err != nil {
		return 0, err
	}
	var hint bson.RawValue
	if !ix.Hidden {
		h, err := bson.Marshal(bson.D{{Key: "h", Value: ix.Name}})
		if err != nil {
			return 0, err
		}
		hint = bson.Raw(h).Lookup("h")
	}
	return e.expire(c, filter, hint, ix.coll.Document(), ix.Name)
}

// expire deletes c's documents matching filter, through hint when set,
// with the collation given (nil: the collection's default).
func (e *Engine) expire(c *Collection, filter bson.Raw, hint bson.RawValue, coll bson.Raw, index string) (int64, error) {
	n, err := e.Delete(c.DB, c.Name, filter, 0, hint, WriteOptions{Collation: coll})
	if n > 0 {
		e.log.Info("TTL monitor deleted expired documents", "ns", c.ns, "index", index, "count", n)
	}
	return n, err
}
