package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one invocation measured; -json writes it.
type Report struct {
	Started   time.Time `json:"started"`
	GoVersion string    `json:"go_version"`
	CPUs      int       `json:"cpus"`
	Args      []string  `json:"args"`
	Clients   int       `json:"clients"`
	Records   int64     `json:"records"`
	Runs      []*Run    `json:"runs"`
	// Rounds is -rounds when above 1; Medians then summarize each
	// workload's runs on each server.
	Rounds  int      `json:"rounds,omitempty"`
	Medians []Median `json:"medians,omitempty"`
	// Ratios compare the two servers of a -compare invocation: with
	// several rounds, their medians.
	Ratios []Ratio `json:"ratios,omitempty"`
}

// Run is one workload run against one server.
type Run struct {
	Workload    string  `json:"workload"`
	Server      string  `json:"server"` // "uri", "compare", or "local" for serverless workloads
	URI         string  `json:"uri,omitempty"`
	Round       int     `json:"round,omitempty"` // with -rounds, from 1
	Clients     int     `json:"clients"`
	LoadSeconds float64 `json:"load_seconds"`
	Seconds     float64 `json:"seconds"`
	Ops         int64   `json:"ops"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	Items       int64   `json:"items"`
	ItemsPerSec float64 `json:"items_per_sec"`
	// PctOfPing is OpsPerSec as a percentage of the ping workload's on the
	// same server in the same round, when ping ran.
	PctOfPing  float64    `json:"pct_of_ping,omitempty"`
	Errors     int64      `json:"errors"`
	FirstError string     `json:"first_error,omitempty"`
	Check      string     `json:"check_failed,omitempty"`
	Notes      []string   `json:"notes,omitempty"`
	PerOp      []OpReport `json:"per_op"`
}

// OpReport is one operation type of a run; latencies in milliseconds.
type OpReport struct {
	Op        string  `json:"op"`
	Ops       int64   `json:"ops"`
	Items     int64   `json:"items"`
	Errors    int64   `json:"errors"`
	OpsPerSec float64 `json:"ops_per_sec"`
	MeanMs    float64 `json:"mean_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P95Ms     float64 `json:"p95_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

// Median is the median of one workload's runs on one server over the
// rounds (of an even number, the mean of the middle two), and the range
// of its share of ping.
type Median struct {
	Workload    string  `json:"workload"`
	Server      string  `json:"server"`
	Runs        int     `json:"runs"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	ItemsPerSec float64 `json:"items_per_sec"`
	PctOfPing   float64 `json:"pct_of_ping,omitempty"`
	MinPct      float64 `json:"min_pct_of_ping,omitempty"`
	MaxPct      float64 `json:"max_pct_of_ping,omitempty"`
}

// Ratio is a workload's ops/s on the -uri server divided by its ops/s on
// the -compare server.
type Ratio struct {
	Workload string  `json:"workload"`
	Ratio    float64 `json:"uri_over_compare"`
}

// finish computes the derived figures: percentages of ping, medians and
// ratios.
func (r *Report) finish() {
	type serverRound struct {
		server string
		round  int
	}
	ping := map[serverRound]float64{}
	for _, run := range r.Runs {
		if run.Workload == "ping" {
			ping[serverRound{run.Server, run.Round}] = run.OpsPerSec
		}
	}
	type workloadServer struct{ workload, server string }
	groups := map[workloadServer][]*Run{}
	var order []workloadServer
	for _, run := range r.Runs {
		if p := ping[serverRound{run.Server, run.Round}]; p > 0 && run.Workload != "ping" {
			run.PctOfPing = 100 * run.OpsPerSec / p
		}
		k := workloadServer{run.Workload, run.Server}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], run)
	}
	byServer := map[string]map[string]float64{}
	var workloads []string
	for _, k := range order {
		m := medianOf(groups[k])
		if r.Rounds > 1 {
			r.Medians = append(r.Medians, m)
		}
		if byServer[k.workload] == nil {
			byServer[k.workload] = map[string]float64{}
			workloads = append(workloads, k.workload)
		}
		byServer[k.workload][k.server] = m.OpsPerSec
	}
	for _, wl := range workloads {
		s := byServer[wl]
		if a, b := s["uri"], s["compare"]; a > 0 && b > 0 {
			r.Ratios = append(r.Ratios, Ratio{wl, a / b})
		}
	}
}

// medianOf summarizes runs, one workload's on one server.
func medianOf(runs []*Run) Median {
	m := Median{Workload: runs[0].Workload, Server: runs[0].Server, Runs: len(runs)}
	var ops, items, pcts []float64
	for _, run := range runs {
		ops, items = append(ops, run.OpsPerSec), append(items, run.ItemsPerSec)
		if run.PctOfPing > 0 {
			pcts = append(pcts, run.PctOfPing)
		}
	}
	m.OpsPerSec, m.ItemsPerSec = median(ops), median(items)
	if len(pcts) > 0 {
		m.PctOfPing, m.MinPct, m.MaxPct = median(pcts), slices.Min(pcts), slices.Max(pcts)
	}
	return m
}

// median is the middle of v, or the mean of its middle two; it sorts v.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// printRun writes one run's figures as a table.
func printRun(w io.Writer, run *Run) {
	where := run.Server
	if run.URI != "" {
		where += " " + run.URI
	}
	fmt.Fprintf(w, "\n%s @ %s: %d clients, load %.1fs, ran %.1fs: %.0f ops/s", run.Workload, where, run.Clients, run.LoadSeconds, run.Seconds, run.OpsPerSec)
	if run.Items != run.Ops {
		fmt.Fprintf(w, ", %.0f items/s", run.ItemsPerSec)
	}
	fmt.Fprintf(w, ", %d errors\n", run.Errors)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tops\tops/s\terrors\tmean ms\tp50 ms\tp95 ms\tp99 ms\tmax ms\t")
	for _, o := range run.PerOp {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", o.Op, o.Ops, o.OpsPerSec, o.Errors, o.MeanMs, o.P50Ms, o.P95Ms, o.P99Ms, o.MaxMs)
	}
	tw.Flush()
	if run.FirstError != "" {
		fmt.Fprintf(w, "  first error: %s\n", run.FirstError)
	}
	for _, n := range run.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	if run.Check != "" {
		fmt.Fprintf(w, "  CHECK FAILED: %s\n", run.Check)
	}
}

// printSummary writes one line per run, then the medians of the rounds
// and the ratios.
func printSummary(w io.Writer, r *Report) {
	fmt.Fprintf(w, "\nsummary (%s, %d CPUs, %d clients)\n", r.GoVersion, r.CPUs, r.Clients)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	round := ""
	if r.Rounds > 1 {
		round = "round\t"
	}
	fmt.Fprintln(tw, round+"workload\tserver\tops/s\titems/s\t% of ping\tp99 ms\tcheck")
	for _, run := range r.Runs {
		if r.Rounds > 1 {
			fmt.Fprintf(tw, "%d\t", run.Round)
		}
		pct, p99, check := "", "", "ok"
		if run.PctOfPing > 0 {
			pct = fmt.Sprintf("%.0f%%", run.PctOfPing)
		}
		if len(run.PerOp) > 0 {
			p99 = fmt.Sprintf("%.3f", run.PerOp[len(run.PerOp)-1].P99Ms)
		}
		if run.Check != "" {
			check = "FAILED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%s\t%s\t%s\n", run.Workload, run.Server, run.OpsPerSec, run.ItemsPerSec, pct, p99, check)
	}
	tw.Flush()
	if len(r.Medians) > 0 {
		fmt.Fprintf(w, "\nmedian of %d rounds\n", r.Rounds)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "workload\tserver\tops/s\titems/s\t% of ping\trange")
		for _, m := range r.Medians {
			pct, span := "", ""
			if m.PctOfPing > 0 {
				pct, span = fmt.Sprintf("%.0f%%", m.PctOfPing), fmt.Sprintf("%.0f–%.0f%%", m.MinPct, m.MaxPct)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%s\t%s\n", m.Workload, m.Server, m.OpsPerSec, m.ItemsPerSec, pct, span)
		}
		tw.Flush()
	}
	for _, q := range r.Ratios {
		fmt.Fprintf(w, "ratio %-14s uri/compare = %.2f\n", q.Workload, q.Ratio)
	}
}

// writeJSON writes the report to path.
func writeJSON(path string, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// SVG layout, in pixels.
const (
	svgLabelW = 170
	svgBarW   = 560
	svgValueW = 90
	svgBarH   = 18
	svgGap    = 10
	svgTop    = 50
)

// svgColors are the bar colours of the servers.
var svgColors = map[string]string{"uri": "#3b6ea8", "compare": "#d08a2e", "local": "#6a9a4a"}

// writeSVG draws one horizontal bar per run, grouped by workload, on a
// logarithmic ops/s scale (the workloads span several orders of magnitude).
func writeSVG(path string, r *Report) error {
	if len(r.Runs) == 0 {
		return fmt.Errorf("no runs to draw")
	}
	hi := 1.0
	for _, run := range r.Runs {
		hi = max(hi, run.OpsPerSec)
	}
	decades := math.Ceil(math.Log10(hi))
	x := func(v float64) float64 { return svgBarW * math.Max(0, math.Log10(math.Max(v, 1))) / decades }

	var b strings.Builder
	y := svgTop
	prev := ""
	for _, run := range r.Runs {
		if run.Workload != prev && prev != "" {
			y += svgGap
		}
		if run.Workload != prev {
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", svgLabelW-8, y+svgBarH-5, html.EscapeString(run.Workload))
		}
		prev = run.Workload
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s @ %s: %.0f ops/s</title></rect>`+"\n",
			svgLabelW, y, x(run.OpsPerSec), svgBarH-2, svgColors[run.Server], html.EscapeString(run.Workload), run.Server, run.OpsPerSec)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%.0f</text>`+"\n", svgLabelW+x(run.OpsPerSec)+4, y+svgBarH-5, run.OpsPerSec)
		y += svgBarH
	}
	height := y + 40
	width := svgLabelW + svgBarW + svgValueW
	var grid strings.Builder
	for d := 0.0; d <= decades; d++ {
		gx := svgLabelW + svgBarW*d/decades
		fmt.Fprintf(&grid, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", gx, svgTop-5, gx, y)
		fmt.Fprintf(&grid, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%g</text>`+"\n", gx, y+15, math.Pow(10, d))
	}
	legend := ""
	lx := svgLabelW
	for _, s := range []string{"uri", "compare", "local"} {
		if uri := serverURI(r, s); uri != "" {
			legend += fmt.Sprintf(`<rect x="%d" y="28" width="10" height="10" fill="%s"/><text x="%d" y="37">%s</text>`+"\n", lx, svgColors[s], lx+14, html.EscapeString(uri))
			lx += 20 + 7*len(uri)
		}
	}
	title := fmt.Sprintf("folio-bench: ops/s (log scale), %d clients, %s, %d CPUs, %s", r.Clients, r.GoVersion, r.CPUs, r.Started.Format(time.DateTime))
	svg := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">
<rect width="100%%" height="100%%" fill="white"/>
<text x="10" y="18" font-size="14">%s</text>
%s%s%s<text x="%d" y="%d" text-anchor="middle" fill="#666">ops/s</text>
</svg>
`, width, height, html.EscapeString(title), legend, grid.String(), b.String(), svgLabelW+svgBarW/2, y+32)
	return os.WriteFile(path, []byte(svg), 0o644)
}

// serverURI names a server of the report for the legend: its URI, "local"
// for serverless runs, or "" when no run used it.
func serverURI(r *Report, server string) string {
	for _, run := range r.Runs {
		if run.Server == server {
			if run.URI == "" {
				return "local (no server)"
			}
			return server + ": " + run.URI
		}
	}
	return ""
}
