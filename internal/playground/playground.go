// Package playground runs an in-process TiKV cluster (client-go's mock
// cluster: several stores, regions split as they outgrow a key count) and N
// Folio frontends over it, each its own instance over its own client-go
// store: the distributed mode on one machine, for trying it, tests and
// benchmarks.
package playground

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/tikvkv"
)

// Playground is a running playground.
type Playground struct {
	// Cluster is the mock cluster; Splitter a store on it that splits
	// its regions.
	Cluster   *tikvkv.MockCluster
	Splitter  *tikvkv.Store
	stopSplit func()
	fronts    []*instance.Instance
	stores    []*tikvkv.Store
}

// Start starts the cluster and the frontends; port 0 gives each
// frontend a free port.
func Start(host string, port, frontends, stores, splitKeys int, log *slog.Logger) (*Playground, error) {
	cluster, err := tikvkv.NewMockCluster(stores)
	if err != nil {
		return nil, err
	}
	pg := &Playground{Cluster: cluster}
	pg.Splitter, err = cluster.Open()
	if err != nil {
		return nil, errors.Join(err, cluster.Close())
	}
	pg.stopSplit = cluster.AutoSplit(pg.Splitter, time.Second, splitKeys)
	for i := range frontends {
		kv, err := cluster.Open()
		if err != nil {
			return nil, errors.Join(err, pg.Close(context.Background()))
		}
		pg.stores = append(pg.stores, kv)
		p := 0
		if port != 0 {
			p = port + i
		}
		a := net.JoinHostPort(host, strconv.Itoa(p))
		in, err := instance.Start(instance.Config{
			Addr:        a,
			Shared:      kv,
			FrontendID:  "playground-" + strconv.Itoa(i),
			ReplSetName: "folio" + strconv.Itoa(i),
			Logger:      log.With("frontend", i),
			Argv:        []string{"folio", "playground"},
		})
		if err != nil {
			return nil, errors.Join(err, pg.Close(context.Background()))
		}
		pg.fronts = append(pg.fronts, in)
		log.Info("playground frontend", "frontend", i, "uri", "mongodb://"+in.Addr()+"/?replicaSet=folio"+strconv.Itoa(i))
	}
	log.Info("playground running", "frontends", frontends, "stores", stores, "regionSplitKeys", splitKeys)
	return pg, nil
}

// URIs are the frontends' connection strings.
func (pg *Playground) URIs() []string {
	var u []string
	for i, in := range pg.fronts {
		u = append(u, "mongodb://"+in.Addr()+"/?replicaSet=folio"+strconv.Itoa(i))
	}
	return u
}

// Close stops the frontends, then the cluster.
func (pg *Playground) Close(ctx context.Context) error {
	var err error
	for _, in := range pg.fronts {
		err = errors.Join(err, in.Close(ctx))
	}
	for _, s := range pg.stores {
		err = errors.Join(err, s.Close())
	}
	if pg.stopSplit != nil {
		pg.stopSplit()
	}
	if pg.Splitter != nil {
		err = errors.Join(err, pg.Splitter.Close())
	}
	return errors.Join(err, pg.Cluster.Close())
}
