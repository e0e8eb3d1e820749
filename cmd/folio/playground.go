package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/folio-db/folio/internal/playground"
)

// runPlayground runs an in-process TiKV cluster (client-go's mock cluster) and
// N Folio frontends over it, each with its own client-go store, on
// consecutive ports from -addr, until SIGINT or SIGTERM.
func runPlayground(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("folio playground", flag.ContinueOnError)
	fs.SetOutput(stderr)
	frontends := fs.Int("frontends", 1, "number of Folio servers, on consecutive ports from -addr's")
	addr := fs.String("addr", "127.0.0.1:27017", "listen address of the first frontend")
	stores := fs.Int("stores", 3, "TiKV stores of the mock cluster (each region has a peer on every store)")
	splitKeys := fs.Int("region-split-keys", 1000, "a region holding more keys than this is split (checked every second)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: folio playground [flags]\n\nOne process running an in-memory TiKV cluster (client-go's mock cluster) and N Folio servers over it, for trying the distributed mode. Data is lost on exit.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	if *frontends < 1 || *stores < 1 || *splitKeys < 1 {
		return errors.New("playground: -frontends, -stores and -region-split-keys must be at least 1")
	}
	host, portStr, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("playground: bad -addr: %w", err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("playground: bad -addr port: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	pg, err := playground.Start(host, port, *frontends, *stores, *splitKeys, log)
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return pg.Close(ctx)
}
