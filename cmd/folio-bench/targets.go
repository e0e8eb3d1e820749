package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/playground"
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

// playgroundPrefix starts an in-process playground: "playground:N" is a
// mock TiKV cluster and N Folio frontends, the clients spread over them.
const playgroundPrefix = "playground:"

// inProcess reports whether uri names servers openTarget starts in this
// process (an in-process Folio or a playground); any other is reached
// over the network.
func inProcess(uri string) bool {
	return isInproc(uri) || strings.HasPrefix(uri, playgroundPrefix)
}

// openTarget connects to uri, first starting an in-process Folio for
// "inproc", "inproc-always" and "inproc-never", or a playground for
// "playground:N" (the target's URI then says so). Several mongodb:// URIs
// separated by spaces are several frontends of one database: clients are
// spread over them round-robin. close stops everything.
func openTarget(label, uri string, clients int) (t *Target, close func(context.Context) error, err error) {
	stopServer := func(context.Context) error { return nil }
	shown := uri
	uris := strings.Fields(uri)
	switch {
	case isInproc(uri):
		dir, err := os.MkdirTemp("", "folio-bench-")
		if err != nil {
			return nil, nil, err
		}
		// a one-member replica set, as the folio command starts by
		// default: the driver's writes are then retryable writes, with
		// the session record each one costs, as against such a server
		in, err := instance.Start(instance.Config{Addr: "127.0.0.1:0", DBPath: dir, Durability: durabilityOf(uri), ReplSetName: "folio"})
		if err != nil {
			return nil, nil, errors.Join(err, os.RemoveAll(dir))
		}
		shown = uri + " " + in.URI()
		uris = []string{in.URI()}
		stopServer = func(ctx context.Context) error {
			return errors.Join(in.Close(ctx), os.RemoveAll(dir))
		}
	case strings.HasPrefix(uri, playgroundPrefix):
		n, err := strconv.Atoi(strings.TrimPrefix(uri, playgroundPrefix))
		if err != nil || n < 1 {
			return nil, nil, fmt.Errorf("bad %s: want %sN, N frontends", uri, playgroundPrefix)
		}
		pg, err := playground.Start("127.0.0.1", 0, n, 3, 1000, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, nil, err
		}
		uris = pg.URIs()
		shown = uri + " " + strings.Join(uris, " ")
		stopServer = pg.Close
	}
	if len(uris) == 0 {
		return nil, nil, fmt.Errorf("no URI in %q", uri)
	}
	t = &Target{Label: label, URI: shown, URIs: uris}
	var conns []*mongo.Client
	closeAll := func(ctx context.Context) error {
		var err error
		for _, c := range conns {
			err = errors.Join(err, c.Disconnect(ctx))
		}
		return errors.Join(err, stopServer(ctx))
	}
	for _, u := range uris {
		// each frontend serves its share of the clients; writes ask for
		// w: 1, as YCSB's MongoDB binding does by default (a replica set
		// member's own default is w: "majority", which waits for the
		// journal), unless the URI names a write concern
		pool := uint64(clients/len(uris)) + 4
		client, err := mongo.Connect(options.Client().SetWriteConcern(writeconcern.W1()).ApplyURI(u).SetMaxPoolSize(pool).SetTimeout(time.Minute))
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("connect %s: %w", u, err), closeAll(context.Background()))
		}
		conns = append(conns, client)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = client.Ping(ctx, nil)
		cancel()
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("ping %s: %w", u, err), closeAll(context.Background()))
		}
		t.Frontends = append(t.Frontends, client.Database(benchDB))
	}
	t.Client, t.DB = conns[0], t.Frontends[0]
	return t, closeAll, nil
}
