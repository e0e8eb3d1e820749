package engine

// Exhausted reports what MongoDB's plan executor knows without reading on
// (its isEOF): that a find's cursor has nothing left. A scan does not know
// it has reached its end until it looks, so a cursor whose batch ends with
// the last document of a scan stays open for one more (empty) getMore, as
// in MongoDB; a reached limit or a drained in-memory sort is known.
func (s *scanCursor) Exhausted() bool {
	e, ok := s.Cursor.(interface{ Exhausted() bool })
	return ok && e.Exhausted()
}

// Exhausted reports that the limit has been reached.
func (m *matchCursor) Exhausted() bool {
	return !m.raw && m.limit > 0 && m.served >= m.limit
}

// Exhausted reports that the sort has nothing left to serve.
func (c *sortedCursor) Exhausted() bool {
	_, ok := c.it.Peek()
	return !ok
}
