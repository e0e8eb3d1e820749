package main

import (
	"fmt"
	"strings"
)

// workloadSpec names a workload and makes fresh instances of it.
type workloadSpec struct {
	name  string
	about string
	// serverless workloads measure the machine, not a server: they run once
	// per invocation, even with -compare.
	serverless bool
	make       func(cfg *Config) Workload
}

// registry lists every workload, in the order "all" runs them.
var registry = []workloadSpec{
	{name: "ycsb-a", about: "YCSB A: 50% read, 50% update, zipfian", make: ycsbWorkload(ycsbA)},
	{name: "ycsb-b", about: "YCSB B: 95% read, 5% update, zipfian", make: ycsbWorkload(ycsbB)},
	{name: "ycsb-c", about: "YCSB C: 100% read, zipfian", make: ycsbWorkload(ycsbC)},
	{name: "ycsb-d", about: "YCSB D: 95% read, 5% insert, latest", make: ycsbWorkload(ycsbD)},
	{name: "ycsb-e", about: "YCSB E: 95% scan of up to 100 records, 5% insert, zipfian", make: ycsbWorkload(ycsbE)},
	{name: "ycsb-f", about: "YCSB F: 50% read, 50% read-modify-write, zipfian", make: ycsbWorkload(ycsbF)},
	{name: "queue", about: "job queue: 50% push, 50% findAndModify pop sorted by created; checks no job is popped twice", make: newQueue(false)},
	{name: "queue-pop", about: "job queue: findAndModify pops only, of -records preloaded jobs; checks no job is popped twice", make: newQueue(true)},
	{name: "comments", about: "comment pages: find by discussion sorted by full_slug with skip/limit over -comments comments", make: newComments},
	{name: "hosts", about: "host metrics: $push with $each/$sort/$slice:-1000 onto 1000-sample arrays", make: newHosts},
	{name: "counters", about: "day counters: upsert by _id with $inc of 'daily.<day>' and 'hourly.<h>'; checks no increment is lost", make: newCounters},
	{name: "cart", about: "add to cart: positional $inc, else $push guarded by $ne, upserting; checks quantities", make: newCart},
	{name: "transfer", about: "two-phase-commit transfers between accounts; checks balances and states", make: newTransfer},
	{name: "bulk", about: "insertMany of 1000 1 KB documents per operation (items/s is docs/s)", make: newBulk},
	{name: "streams", about: "change streams: 1,000 inserts/s into a collection 100 streams watch; reports each event's delay after the write's acknowledgement and checks every stream saw every insert", make: newStreamed},
	{name: "ycsb-a-streams", about: "YCSB A with 100 change streams open on its collection (compare with ycsb-a)", make: ycsbStreamedWorkload(ycsbA)},
	{name: "near", about: "store locator: $near for the 10 closest of -records points (2dsphere index) to a random point", make: newPlaces(true)},
	{name: "near-eq", about: "store locator: find one of -records points by an indexed number (the equality lookup near compares with)", make: newPlaces(false)},
	{name: "ping", about: "floor: ping round trips through the driver", make: newPing},
	{name: "pebble", about: "floor: Pebble without a server, 50% synced 1 KB writes (one batch each), 50% reads, zipfian", serverless: true, make: newPebble},
}

// groups name sets of workloads for -workload.
var groups = map[string][]string{
	"ycsb":  {"ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"},
	"seeds": {"queue", "queue-pop", "comments", "hosts", "counters", "cart", "transfer", "bulk"},
	"floor": {"ping", "pebble"},
	"geo":   {"near", "near-eq"},
}

// selectWorkloads parses a comma-separated list of workload and group
// names ("all" for every workload).
func selectWorkloads(list string) ([]workloadSpec, error) {
	byName := map[string]workloadSpec{}
	for _, s := range registry {
		byName[s.name] = s
	}
	var out []workloadSpec
	seen := map[string]bool{}
	add := func(name string) error {
		s, ok := byName[name]
		if !ok {
			return fmt.Errorf("unknown workload %q (-list shows them)", name)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, s)
		}
		return nil
	}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		names := groups[name]
		switch {
		case name == "all":
			for _, s := range registry {
				names = append(names, s.name)
			}
		case names == nil:
			names = []string{name}
		}
		for _, n := range names {
			if err := add(n); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
