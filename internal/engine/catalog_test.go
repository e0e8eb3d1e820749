package engine

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestCollectionOptionsPersist proves the create options a collection was
// made with, and index storage engine options, are read back when the
// catalog is loaded again, so listCollections and listIndexes report them
// after a restart.
func TestCollectionOptionsPersist(t *testing.T) {
	kv := testkv.Open(t)
	yes := true
	storage := ext(t, `{"wiredTiger": {"configString": "x"}}`)
	want := map[string]CollectionOptions{
		"plain":  {},
		"capped": {Capped: true, Size: 4096, Max: 7},
		"tuned": {AutoIndexID: &yes, StorageEngine: storage, IndexStorageEngine: storage,
			ValidationLevel: "moderate", ValidationAction: "warn"},
	}
	first, err := Open(kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range want {
		if err := first.CreateCollection("test", name, opts); err != nil {
			t.Fatal(err)
		}
	}
	spec := IndexSpec{Name: "a_1", Key: ext(t, `{"a": 1}`), ExpireAfter: -1, StorageEngine: storage}
	if _, err := first.CreateIndexes("test", "plain", []IndexSpec{spec}, nil); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for name, opts := range want {
		c := again.Collection("test", name)
		if c == nil || !c.Options.Equal(opts) {
			t.Fatalf("%s: options after reload %+v, want %+v", name, c, opts)
		}
		if err := again.CreateCollection("test", name, opts); err != nil {
			t.Fatalf("%s: create again with the same options: %v", name, err)
		}
	}
	ix := again.Collection("test", "plain").FindIndex("a_1")
	if ix == nil || !bytes.Equal(storageEngineOf(ix.Spec), storage) {
		t.Fatalf("index after reload: %+v", ix)
	}
	if dup, err := checkIndexConflict(again.Collection("test", "plain").Indexes(), spec); err != nil || !dup {
		t.Fatalf("the same index again: dup %v, err %v", dup, err)
	}
}

// TestCollectionOptionsDoc proves the listCollections options document
// follows MongoDB's field order and number types whatever the create order.
func TestCollectionOptionsDoc(t *testing.T) {
	no := false
	tests := []struct {
		opts CollectionOptions
		want string
	}{
		{CollectionOptions{}, `{}`},
		{CollectionOptions{Capped: true, Size: 256}, `{"capped": true, "size": {"$numberInt": "256"}}`},
		{CollectionOptions{Capped: true, Size: 1 << 31, Max: 1 << 31}, `{"capped": true, "size": {"$numberLong": "2147483648"}, "max": {"$numberLong": "2147483648"}}`},
		{CollectionOptions{ValidationAction: "warn", ValidationLevel: "off", Temp: true, AutoIndexID: &no, Capped: true, Size: 512, Max: 1},
			`{"capped": true, "size": {"$numberInt": "512"}, "max": {"$numberInt": "1"}, "autoIndexId": false, "temp": true, "validationLevel": "off", "validationAction": "warn"}`},
	}
	for _, tt := range tests {
		got, err := bson.Marshal(tt.opts.Doc())
		if err != nil {
			t.Fatal(err)
		}
		if want := ext(t, tt.want); !bytes.Equal(got, want) {
			t.Errorf("%+v: got %s, want %s", tt.opts, bson.Raw(got), want)
		}
	}
}

// TestCollectionUUIDVersion4: a collection's UUID is a random version 4
// UUID (RFC 4122 variant), as MongoDB's UUID::gen draws it.
func TestCollectionUUIDVersion4(t *testing.T) {
	e := newTestEngine(t)
	for _, name := range []string{"a", "b", "c", "d"} {
		if err := e.CreateCollection("test", name, CollectionOptions{}); err != nil {
			t.Fatal(err)
		}
		u := e.Collection("test", name).UUID
		if u[6]>>4 != 4 || u[8]>>6 != 2 {
			t.Errorf("%s: UUID %s is not of version 4", name, uuidString(u))
		}
	}
}
