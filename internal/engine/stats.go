package engine

// CollectionStats are the figures collStats and dbStats report.
type CollectionStats struct {
	Count int64
	Size  int64 // total BSON bytes of the documents
}

// Stats counts the documents of c and their total size by a scan of a
// consistent snapshot.
func (e *Engine) Stats(c *Collection) (CollectionStats, error) {
	lo, hi := docSpan(c.ID)
	it, err := e.kv.NewIter(lo, hi)
	if err != nil {
		return CollectionStats{}, err
	}
	defer it.Close()
	var s CollectionStats
	for it.First(); it.Valid(); it.Next() {
		s.Count++
		s.Size += int64(len(it.Value()))
	}
	return s, it.Error()
}
