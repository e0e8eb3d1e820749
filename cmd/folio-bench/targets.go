package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/instance"
)

// In-process servers: these -uri and -compare values start a Folio inside
// folio-bench, on a loopback port, with its data in a temporary directory.
// "inproc" runs with Folio's default durability (MongoDB's: the journal
// is synced every 100 ms, or at once for j:true writes); "inproc-always"
// syncs every write and "inproc-never" none, as folio -durability does.
const inprocPrefix = "inproc"

// durabilityOf is the durability an in-process target asks for.
func durabilityOf(uri string) engine.Durability {
	d, _ := engine.ParseDurability(strings.TrimPrefix(strings.TrimPrefix(uri, inprocPrefix), "-"))
	return d
}

// isInproc reports whether uri names an in-process server.
func isInproc(uri string) bool {
	switch uri {
	case inprocPrefix, inprocPrefix + "-always", inprocPrefix + "-never":
		return true
	}
	return false
}

// openTarget connects to uri, first starting an in-process Folio for
// "inproc", "inproc-always" and "inproc-never" (the target's URI then says
// so). close stops both.
func openTarget(label, uri string, clients int) (t *Target, close func(context.Context) error, err error) {
	stopServer := func(context.Context) error { return nil }
	shown := uri
	if isInproc(uri) {
		dir, err := os.MkdirTemp("", "folio-bench-")
		if err != nil {
			return nil, nil, err
		}
		in, err := instance.Start(instance.Config{Addr: "127.0.0.1:0", DBPath: dir, Durability: durabilityOf(uri)})
		if err != nil {
			return nil, nil, errors.Join(err, os.RemoveAll(dir))
		}
		shown = uri + " " + in.URI()
		uri = in.URI()
		stopServer = func(ctx context.Context) error {
			return errors.Join(in.Close(ctx), os.RemoveAll(dir))
		}
	}
	opts := options.Client().ApplyURI(uri).
		SetMaxPoolSize(uint64(clients) + 4).
		SetTimeout(time.Minute)
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("connect %s: %w", uri, err), stopServer(context.Background()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx, nil); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("ping %s: %w", uri, err), client.Disconnect(ctx), stopServer(ctx))
	}
	t = &Target{Label: label, URI: shown, Client: client, DB: client.Database(benchDB)}
	return t, func(ctx context.Context) error {
		return errors.Join(client.Disconnect(ctx), stopServer(ctx))
	}, nil
}
