package commands

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestMergeAuthzInterrupted checks that an interrupted
// _mergeAuthzCollections stops before writing a document, and that the
// same merge, not interrupted, writes it.
func TestMergeAuthzInterrupted(t *testing.T) {
	s := newTestService(t)
	run := func(db string, cmd bson.D) bson.Raw {
		t.Helper()
		reply := bson.Raw(s.Run(&Request{DB: db, Cmd: marshal(cmd)}))
		if reply.Lookup("ok").Double() != 1 {
			t.Fatalf("%v: %v", cmd, reply)
		}
		return reply
	}
	// the documents of admin.system.users holding user m.u9
	stored := func() []bson.Raw {
		t.Helper()
		docs, err := s.findAuthDocs(usersColl, bson.D{{Key: "_id", Value: "m.u9"}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return docs
	}
	run("m", bson.D{{Key: "createUser", Value: "u9"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{}}})
	docs := stored()
	if len(docs) != 1 {
		t.Fatalf("the user's documents: %v", docs)
	}
	run("m", bson.D{{Key: "dropUser", Value: "u9"}})
	run("admin", bson.D{{Key: "insert", Value: "tempusers"}, {Key: "documents", Value: bson.A{docs[0]}}})

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(mongoerr.New(mongoerr.Interrupted, "operation was interrupted"))
	err := s.mergeAuthzDocs(ctx, "admin.tempusers", usersColl, "user", "m", false)
	if mongoerr.As(err).Code != mongoerr.Interrupted {
		t.Fatalf("interrupted merge: %v, want Interrupted", err)
	}
	if n := len(stored()); n != 0 {
		t.Fatalf("interrupted merge wrote %d users", n)
	}
	if err := s.mergeAuthzDocs(context.Background(), "admin.tempusers", usersColl, "user", "m", false); err != nil {
		t.Fatal(err)
	}
	if n := len(stored()); n != 1 {
		t.Fatalf("merge wrote %d users, want 1", n)
	}
}
