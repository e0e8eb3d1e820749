package instance

import (
	"errors"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/folio-db/folio/internal/commands"
	"github.com/folio-db/folio/internal/metrics"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/pebblekv"
)

// serveMetrics exports svc's metrics, and the store's when it is Pebble,
// on addr (/metrics) until the returned server is closed.
func serveMetrics(addr string, svc *commands.Service, kv storage.KV) (*http.Server, net.Listener, error) {
	m := metrics.New()
	svc.Metrics = m
	m.Gauge("folio_connections", "Client connections open.", func() float64 { return float64(svc.Connections.Load()) })
	m.Counter("folio_connections_accepted_total", "Client connections accepted since the server started.", func() float64 { return float64(svc.TotalConns.Load()) })
	m.Gauge("folio_cursors_open", "Cursors open between getMores.", func() float64 { return float64(svc.Cursors.Len()) })
	m.Gauge("folio_sessions", "Logical sessions the server keeps.", func() float64 { return float64(len(svc.Sessions.List())) })
	m.CounterVec("folio_operations_total", "Operations by kind, as serverStatus.opcounters counts them.", "kind", func() map[string]float64 {
		o := &svc.Ops
		return map[string]float64{"insert": float64(o.Insert.Load()), "query": float64(o.Query.Load()), "update": float64(o.Update.Load()),
			"delete": float64(o.Delete.Load()), "getmore": float64(o.GetMore.Load()), "command": float64(o.Command.Load())}
	})
	m.CounterVec("folio_documents_total", "Documents returned, inserted, updated and deleted.", "op", func() map[string]float64 {
		d := &svc.Docs
		return map[string]float64{"returned": float64(d.Returned.Load()), "inserted": float64(d.Inserted.Load()),
			"updated": float64(d.Updated.Load()), "deleted": float64(d.Deleted.Load())}
	})
	m.CounterVec("folio_transactions_total", "Transactions started, committed and aborted.", "event", func() map[string]float64 {
		t := &svc.Sessions.Txns
		return map[string]float64{"started": float64(t.Started.Load()), "committed": float64(t.Committed.Load()), "aborted": float64(t.Aborted.Load())}
	})
	m.Counter("folio_transaction_write_conflicts_total", "Transactions that failed with a write conflict (WriteConflict, TransientTransactionError).",
		func() float64 { return float64(svc.Sessions.Txns.Conflicts.Load()) })
	m.CounterVec("folio_network_bytes_total", "Bytes of client messages, before compression.", "direction", func() map[string]float64 {
		return map[string]float64{"in": float64(svc.Net.BytesIn.Load()), "out": float64(svc.Net.BytesOut.Load())}
	})
	if db, ok := kv.(*pebblekv.DB); ok {
		exportPebble(m, db)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			svc.Log.Error("metrics server", "err", err)
		}
	}()
	return srv, ln, nil
}

// exportPebble exports Pebble's own figures, read at each scrape.
func exportPebble(m *metrics.Metrics, db *pebblekv.DB) {
	m.Counter("folio_pebble_compactions_total", "Pebble compactions.", func() float64 { return float64(db.Metrics().Compact.Count) })
	m.Counter("folio_pebble_flushes_total", "Pebble memtable flushes.", func() float64 { return float64(db.Metrics().Flush.Count) })
	m.Gauge("folio_pebble_read_amplification", "Pebble's read amplification: the sublevels a point read may consult.", func() float64 { return float64(db.Metrics().ReadAmp()) })
	m.Counter("folio_pebble_block_cache_hits_total", "Pebble block cache hits.", func() float64 { return float64(db.Metrics().BlockCache.Hits) })
	m.Counter("folio_pebble_block_cache_misses_total", "Pebble block cache misses.", func() float64 { return float64(db.Metrics().BlockCache.Misses) })
	m.Counter("folio_pebble_row_cache_hits_total", "Point reads served by Folio's row cache.", func() float64 { h, _ := db.RowCacheStats(); return float64(h) })
	m.Counter("folio_pebble_row_cache_misses_total", "Point reads the row cache did not hold.", func() float64 { _, n := db.RowCacheStats(); return float64(n) })
	m.Counter("folio_pebble_wal_bytes_written_total", "Bytes written to Pebble's write-ahead log.", func() float64 { return float64(db.Metrics().WAL.BytesWritten) })
	m.Histogram("folio_pebble_wal_fsync_duration_seconds", "Pebble's write-ahead log syncs (the count) and how long each took.", 1e-9,
		func() prometheus.Histogram { return db.Metrics().LogWriter.FsyncLatency })
	m.Gauge("folio_pebble_disk_bytes", "Disk space Pebble uses.", func() float64 { return float64(db.Metrics().DiskSpaceUsage()) })
}
