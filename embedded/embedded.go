// Package embedded runs a real Folio inside the calling process, on a
// random loopback port: a MongoDB-compatible database for a Go program's
// tests, without a server to install or start (the role
// mongodb-memory-server plays for Node).
//
//	srv, err := embedded.Start(ctx, embedded.Options{InMemory: true})
//	if err != nil { ... }
//	defer srv.Close()
//	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
//
// The server is a one-member replica set ("folio"), so sessions,
// transactions and change streams work through any driver.
package embedded

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/folio-db/folio/internal/instance"
)

// Options configure an embedded server.
type Options struct {
	// Dir is the data directory; ignored when InMemory is set. A directory
	// kept between runs keeps the data.
	Dir string
	// InMemory keeps everything in memory, gone at Close.
	InMemory bool
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// ReplSetName is the replica set the server reports; empty is "folio".
	// A standalone server is not offered: drivers need a replica set for
	// transactions.
	ReplSetName string
	// Auth turns access control on; the first user must then be created
	// over a loopback connection (MongoDB's localhost exception).
	Auth bool
}

// Server is a running embedded Folio.
type Server struct {
	in *instance.Instance
}

// closeTimeout is how long Close lets running operations finish.
const closeTimeout = 5 * time.Second

// Start starts a server on 127.0.0.1 and a free port. ctx bounds the
// start only.
func Start(ctx context.Context, o Options) (*Server, error) {
	if !o.InMemory && o.Dir == "" {
		return nil, errors.New("embedded: set Dir, or InMemory")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := o.ReplSetName
	if name == "" {
		name = "folio"
	}
	in, err := instance.Start(instance.Config{Addr: "127.0.0.1:0", DBPath: o.Dir, InMemory: o.InMemory, Logger: o.Logger, ReplSetName: name, Auth: o.Auth})
	if err != nil {
		return nil, err
	}
	return &Server{in: in}, nil
}

// URI is a connection string for the server: mongodb://127.0.0.1:<port>/.
func (s *Server) URI() string { return s.in.URI() }

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.in.Addr() }

// Close shuts the server down: running operations get a few seconds,
// then storage is flushed and closed.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return s.in.Close(ctx)
}
