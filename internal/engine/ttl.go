package engine

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TTLInterval is how often the TTL monitor looks for expired documents, as
// MongoDB's ttlMonitorSleepSecs default.
const TTLInterval = 60 * time.Second

// ExpireTTL deletes the documents that TTL indexes say have expired: those
// whose indexed field is a date (or an array holding one) earlier than now
// minus the index's expireAfterSeconds. It returns how many it deleted.
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
		for _, ix := range c.Indexes() {
			if ix.ExpireAfter < 0 {
				continue
			}
			if !e.RunsJobs() {
				return total, nil
			}
			cutoff := now.Add(-time.Duration(ix.ExpireAfter) * time.Second)
			filter, err := bson.Marshal(bson.D{{Key: ix.Fields[0].Path, Value: bson.D{{Key: "$lt", Value: bson.NewDateTimeFromTime(cutoff)}}}})
			if err != nil {
				return total, err
			}
			hint, err := bson.Marshal(bson.D{{Key: "h", Value: ix.Name}})
			if err != nil {
				return total, err
			}
			n, err := e.Delete(c.DB, c.Name, filter, 0, bson.Raw(hint).Lookup("h"), WriteOptions{})
			total += n
			if err != nil {
				return total, err
			}
			if n > 0 {
				e.log.Info("TTL monitor deleted expired documents", "ns", c.DB+"."+c.Name, "index", ix.Name, "count", n)
			}
		}
	}
	return total, nil
}
