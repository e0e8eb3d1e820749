package driver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// scrape reads /metrics at addr into sample → value ("name{labels}").
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetrics: after a workload, /metrics counts its commands by name and
// outcome, their latencies, the documents and the store's work.
func TestMetrics(t *testing.T) {
	cfg := replSetConfig()
	cfg.MetricsAddr = "127.0.0.1:0"
	in := startInstance(t, cfg)
	client := connect(t, in)
	ctx := context.Background()
	before := scrape(t, in.MetricsAddr())
	coll := client.Database(testDB).Collection("metrics")
	for i := range 5 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		findAll(t, coll, bson.D{})
	}
	if err := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "find", Value: "metrics"}, {Key: "filter", Value: bson.D{{Key: "$bogus", Value: 1}}}}).Err(); err == nil {
		t.Fatal("a bad filter was accepted")
	}
	// Three transactions: A commits; B conflicts with A's open write and
	// aborts; C is aborted by its client.
	txnSession := func() (*mongo.Session, context.Context) {
		t.Helper()
		sess, err := client.StartSession()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.EndSession(ctx) })
		if err := sess.StartTransaction(); err != nil {
			t.Fatal(err)
		}
		return sess, mongo.NewSessionContext(ctx, sess)
	}
	a, actx := txnSession()
	b, bctx := txnSession()
	c, cctx := txnSession()
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}
	if _, err := coll.UpdateByID(actx, 0, inc); err != nil {
		t.Fatal(err)
	}
	_, err := coll.UpdateByID(bctx, 0, inc)
	requireCode(t, err, 112, "WriteConflict")
	_ = b.AbortTransaction(ctx)
	if err := a.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(cctx, bson.D{{Key: "_id", Value: "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.AbortTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	status, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if tx := status.Lookup("transactions"); tx.Document().Lookup("totalStarted").AsInt64() != 3 || tx.Document().Lookup("totalCommitted").AsInt64() != 1 ||
		tx.Document().Lookup("totalAborted").AsInt64() != 2 || tx.Document().Lookup("currentOpen").AsInt64() != 0 {
		t.Errorf("serverStatus.transactions %s", tx)
	}
	after := scrape(t, in.MetricsAddr())
	moved := func(sample string) float64 { return after[sample] - before[sample] }
	// Six inserts: five, and C's, counted though C aborted, as MongoDB
	// counts them.
	for sample, want := range map[string]float64{
		`folio_commands_total{command="insert",outcome="ok"}`:     6,
		`folio_commands_total{command="find",outcome="ok"}`:       3,
		`folio_commands_total{command="find",outcome="BadValue"}`: 1,
		`folio_command_duration_seconds_count{command="insert"}`:  6,
		`folio_documents_total{op="inserted"}`:                    6,
		`folio_documents_total{op="returned"}`:                    15,
		`folio_operations_total{kind="insert"}`:                   6,
		`folio_transactions_total{event="started"}`:               3,
		`folio_transactions_total{event="committed"}`:             1,
		`folio_transactions_total{event="aborted"}`:               2,
		`folio_transaction_write_conflicts_total`:                 1,
	} {
		if got := moved(sample); got != want {
			t.Errorf("%s moved by %v, want %v", sample, got, want)
		}
	}
	expected := []string{"folio_connections", "go_goroutines", "process_resident_memory_bytes"}
	if !testkv.TiKV() {
		expected = append(expected, "folio_pebble_disk_bytes", "folio_pebble_wal_bytes_written_total", "folio_pebble_wal_fsync_duration_seconds_count", "folio_pebble_row_cache_hits_total", "folio_pebble_row_cache_misses_total")
	}
	for _, sample := range expected {
		if _, ok := after[sample]; !ok {
			t.Errorf("no %s", sample)
		}
	}
	if after["folio_connections"] < 1 {
		t.Errorf("folio_connections %v with a client connected", after["folio_connections"])
	}

	// D stays open: inactive between its commands, active while one runs.
	d, dctx := txnSession()
	if _, err := coll.InsertOne(dctx, bson.D{{Key: "_id", Value: "d"}}); err != nil {
		t.Fatal(err)
	}
	current := func() [3]int64 {
		status, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		tx := status.Lookup("transactions").Document()
		return [3]int64{tx.Lookup("currentActive").AsInt64(), tx.Lookup("currentInactive").AsInt64(), tx.Lookup("currentOpen").AsInt64()}
	}
	if got := current(); got != [3]int64{0, 1, 1} {
		t.Errorf("an open transaction between commands: currentActive, currentInactive, currentOpen %v, want 0 1 1", got)
	}
	// a find of D's that takes a second, tried until serverStatus saw it
	var seen bool
	for try := 0; try < 5 && !seen; try++ {
		done := make(chan error, 1)
		go func() { done <- coll.FindOne(dctx, bson.D{{Key: "$where", Value: "sleep(1000) || true"}}).Err() }()
		for running := true; running && !seen; {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				running = false
			default:
				seen = current() == [3]int64{1, 0, 1}
			}
		}
		if seen {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
	if !seen {
		t.Error("serverStatus never showed the transaction active while its find ran")
	}
	if err := d.AbortTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if got := current(); got != [3]int64{0, 0, 0} {
		t.Errorf("after the abort: currentActive, currentInactive, currentOpen %v, want 0 0 0", got)
	}
}

// TestGrafanaDashboard: every folio_ metric docs/grafana-dashboard.json
// queries is one the server exports.
func TestGrafanaDashboard(t *testing.T) {
	testkv.SkipOnTiKV(t, "the dashboard's Pebble panels need the Pebble store")
	raw, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	cfg := defaultConfig()
	cfg.MetricsAddr = "127.0.0.1:0"
	in := startInstance(t, cfg)
	connect(t, in)
	exported := map[string]bool{}
	for sample := range scrape(t, in.MetricsAddr()) {
		name, _, _ := strings.Cut(sample, "{")
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			name = strings.TrimSuffix(name, suffix)
		}
		exported[name] = true
	}
	metricName := regexp.MustCompile(`\b(folio|process)_[a-z_]+`)
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			for _, name := range metricName.FindAllString(target.Expr, -1) {
				base := name
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					base = strings.TrimSuffix(base, suffix)
				}
				if !exported[base] {
					t.Errorf("panel %q queries %s, which the server does not export", p.Title, name)
				}
			}
		}
	}
	if len(dash.Panels) == 0 {
		t.Error("no panels")
	}
}
