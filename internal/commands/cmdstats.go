package commands

import (
	"slices"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// commandStats are serverStatus.metrics.commands: for each command (by its
// first name, its aliases counting with it) how many ran and how many
// failed; the commands no server knows (<UNKNOWN>); and, as MongoDB's
// UpdateMetrics, the update statements and findAndModify commands that
// used a pipeline or arrayFilters.
type commandStats struct {
	once    sync.Once
	byName  map[string]*commandCount // every registered command, made once
	unknown atomic.Int64
	// pipeline and arrayFilters of update and findAndModify
	updatePipeline, updateArrayFilters atomic.Int64
	famPipeline, famArrayFilters       atomic.Int64
}

// commandCount counts the runs of one command.
type commandCount struct{ total, failed atomic.Int64 }

func (c *commandStats) counts() map[string]*commandCount {
	c.once.Do(func() {
		c.byName = map[string]*commandCount{}
		for _, cmd := range handlers {
			if _, ok := c.byName[cmd.names[0]]; !ok {
				c.byName[cmd.names[0]] = &commandCount{}
			}
		}
	})
	return c.byName
}

// countCommand counts a run of the command c (unknown unless known),
// failed when err is set.
func (s *Service) countCommand(c command, known bool, err error) {
	if !known {
		s.cmdStats.unknown.Add(1)
		return
	}
	n := s.cmdStats.counts()[c.names[0]]
	n.total.Add(1)
	if err != nil {
		n.failed.Add(1)
	}
}

// section is metrics.commands: <UNKNOWN>, then each command the server
// offers in name order (MongoDB's metric tree is sorted), update and
// findAndModify with their pipeline and arrayFilters counts.
func (c *commandStats) section(s *Service) bson.D {
	counts := c.counts()
	names := make([]string, 0, len(counts))
	for n := range counts {
		if h := handlers[n]; s.available(h) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	out := bson.D{{Key: "<UNKNOWN>", Value: c.unknown.Load()}}
	for _, n := range names {
		cnt := counts[n]
		d := bson.D{{Key: "failed", Value: cnt.failed.Load()}, {Key: "total", Value: cnt.total.Load()}}
		switch n {
		case "update":
			d = bson.D{{Key: "arrayFilters", Value: c.updateArrayFilters.Load()}, d[0], {Key: "pipeline", Value: c.updatePipeline.Load()}, d[1]}
		case "findAndModify":
			d = bson.D{{Key: "arrayFilters", Value: c.famArrayFilters.Load()}, d[0], {Key: "pipeline", Value: c.famPipeline.Load()}, d[1]}
		}
		out = append(out, bson.E{Key: n, Value: d})
	}
	return out
}
