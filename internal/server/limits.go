package server

// defaultMaxConnections is MongoDB's default net.maxIncomingConnections.
const defaultMaxConnections = 1_000_000

// MaxConnections is the connection limit MongoDB applies for a requested
// net.maxIncomingConnections (its default 1,000,000 when want <= 0): at most
// 80% of the process's file descriptor limit, the rest being left to
// storage files.
func MaxConnections(want int64) int64 {
	return clampConnections(want, fdLimit())
}

// clampConnections bounds want (defaultMaxConnections when <= 0) by 80% of
// fdLimit (no bound when zero); the result is at least 1.
func clampConnections(want int64, fdLimit uint64) int64 {
	if want <= 0 {
		want = defaultMaxConnections
	}
	if fdLimit > 0 && fdLimit < 1<<40 {
		want = min(want, int64(fdLimit)*8/10)
	}
	return max(want, 1)
}
