package server

import (
	"time"

	"github.com/folio-db/folio/internal/mongoerr"
)

// watchEvery is how often the disconnect watcher looks at the connections
// running a command. A command still running at two looks is checked for a
// vanished client, so a dead client's operation ends within two periods
// plus its scan's next check, well under 100 ms; quick commands are never
// looked at, and a request costs only two atomic stores.
const watchEvery = 25 * time.Millisecond

// errDisconnected is the error an operation fails with once its client is
// gone, as in MongoDB (whose reply nobody reads).
var errDisconnected = mongoerr.New(mongoerr.ClientDisconnect, "operation was interrupted because a client disconnected")

func (s *Server) watchConn(c *conn) {
	s.mu.Lock()
	s.live[c] = 0
	s.mu.Unlock()
}

func (s *Server) unwatchConn(c *conn) {
	s.mu.Lock()
	delete(s.live, c)
	s.mu.Unlock()
}

// watch ends, with ClientDisconnect, the context of every connection whose
// client went away while a command of it runs, until the server shuts
// down. Reads and aggregations stop at once; writes stop between
// documents, each document's change being atomic.
func (s *Server) watch() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	var suspects []*conn
	for {
		select {
		case <-t.C:
		case <-s.done:
			return
		}
		suspects = suspects[:0]
		s.mu.Lock()
		for c, seen := range s.live {
			running := c.running.Load()
			if running != 0 && running == seen {
				suspects = append(suspects, c)
			}
			s.live[c] = running
		}
		s.mu.Unlock()
		for _, c := range suspects {
			if peerClosed(c.nc) {
				c.disconnected(errDisconnected)
			}
		}
		clear(suspects)
	}
}
