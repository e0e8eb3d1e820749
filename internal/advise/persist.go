package advise

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The observations survive restarts: the server saves them (Save) in a
// document of its own now and then and at shutdown, and loads them (Load)
// when it starts.

type savedShape struct {
	Key        []byte   `bson:"key"`
	NS         string   `bson:"ns"`
	Kind       string   `bson:"kind"`
	Shape      string   `bson:"shape"`
	Eq         []string `bson:"eq"`
	Range      []string `bson:"range"`
	Unanchored []string `bson:"unanchored"`
	Fields     []string `bson:"fields"`
	Sort       []string `bson:"sort"`
	Count      int64    `bson:"count"`
	Micros     int64    `bson:"micros"`
	Hist       []int64  `bson:"hist"`
	Keys       int64    `bson:"keys"`
	Docs       int64    `bson:"docs"`
	Returned   int64    `bson:"returned"`
	Plan       string   `bson:"plan"`
	MaxSkip    int64    `bson:"maxSkip"`
	Skips      int64    `bson:"skips"`
	MaxIn      int      `bson:"maxIn"`
}

type savedField struct {
	Key         string    `bson:"key"`
	NS          string    `bson:"ns"`
	Path        string    `bson:"path"`
	Writes      int64     `bson:"writes"`
	MultiWrites int64     `bson:"multiWrites"`
	MultiDocs   int64     `bson:"multiDocs"`
	Pushes      int64     `bson:"pushes"`
	Unbounded   int64     `bson:"unbounded"`
	FirstPush   time.Time `bson:"firstPush"`
}

type savedLookup struct {
	Key     string `bson:"key"`
	NS      string `bson:"ns"`
	From    string `bson:"from"`
	Foreign string `bson:"foreign"`
	Count   int64  `bson:"count"`
}

type savedWrites struct {
	NS string `bson:"ns"`
	N  int64  `bson:"n"`
}

type savedSizes struct {
	NS    string  `bson:"ns"`
	Count int64   `bson:"count"`
	Max   int64   `bson:"max"`
	Hist  []int64 `bson:"hist"`
}

type saved struct {
	Since   time.Time     `bson:"since"`
	Shapes  []savedShape  `bson:"shapes"`
	Fields  []savedField  `bson:"fields"`
	Lookups []savedLookup `bson:"lookups"`
	Writes  []savedWrites `bson:"writes"`
	Sizes   []savedSizes  `bson:"sizes"`
}

// Save is the observations as a document.
func (o *Observer) Save() (bson.Raw, error) {
	o.mu.Lock()
	s := saved{Since: o.since}
	for k, v := range o.shapes {
		s.Shapes = append(s.Shapes, savedShape{Key: []byte(k), NS: v.ns, Kind: v.kind, Shape: v.shape, Eq: v.q.eq, Range: v.q.rng,
			Unanchored: v.q.unanchored, Fields: v.q.fields, Sort: v.sortKeys, Count: v.count, Micros: v.micros, Hist: v.hist[:],
			Keys: v.keys, Docs: v.docs, Returned: v.ret, Plan: v.plan, MaxSkip: v.maxSkip, Skips: v.skips, MaxIn: v.maxIn})
	}
	for k, v := range o.fields {
		s.Fields = append(s.Fields, savedField{Key: k, NS: v.ns, Path: v.path, Writes: v.writes, MultiWrites: v.multiWrites,
			MultiDocs: v.multiDocs, Pushes: v.pushes, Unbounded: v.unbounded, FirstPush: v.firstPush})
	}
	for k, v := range o.lookups {
		s.Lookups = append(s.Lookups, savedLookup{Key: k, NS: v.ns, From: v.from, Foreign: v.foreign, Count: v.count})
	}
	for k, v := range o.writes {
		s.Writes = append(s.Writes, savedWrites{NS: k, N: v})
	}
	for k, v := range o.sizes {
		s.Sizes = append(s.Sizes, savedSizes{NS: k, Count: v.count, Max: v.max, Hist: v.hist[:]})
	}
	o.mu.Unlock()
	return bson.Marshal(s)
}

// Load replaces the observations with those of a document Save made.
func (o *Observer) Load(doc bson.Raw) error {
	var s saved
	if err := bson.Unmarshal(doc, &s); err != nil {
		return err
	}
	o.Reset()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.since = s.Since
	for _, v := range s.Shapes {
		st := &shapeStats{ns: v.NS, kind: v.Kind, shape: v.Shape, q: query{shape: v.Shape, eq: v.Eq, rng: v.Range, unanchored: v.Unanchored, fields: v.Fields, maxIn: v.MaxIn},
			sortKeys: v.Sort, count: v.Count, micros: v.Micros, keys: v.Keys, docs: v.Docs, ret: v.Returned, plan: v.Plan, maxSkip: v.MaxSkip, skips: v.Skips, maxIn: v.MaxIn}
		copy(st.hist[:], v.Hist)
		o.shapes[string(v.Key)] = st
	}
	for _, v := range s.Fields {
		o.fields[v.Key] = &fieldStats{ns: v.NS, path: v.Path, writes: v.Writes, multiWrites: v.MultiWrites, multiDocs: v.MultiDocs,
			pushes: v.Pushes, unbounded: v.Unbounded, firstPush: v.FirstPush}
	}
	for _, v := range s.Lookups {
		o.lookups[v.Key] = &lookupStats{ns: v.NS, from: v.From, foreign: v.Foreign, count: v.Count}
	}
	for _, w := range s.Writes {
		o.writes[w.NS] = w.N
	}
	for _, z := range s.Sizes {
		st := &sizeStats{count: z.Count, max: z.Max}
		copy(st.hist[:], z.Hist)
		o.sizes[z.NS] = st
	}
	return nil
}
