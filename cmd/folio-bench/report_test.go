package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestReportRounds: with several rounds, a run's share of ping is of the
// ping of its own round and server, each workload gets the median of its
// runs on each server (of an even number, the mean of the middle two),
// and the ratios compare the two servers' medians.
func TestReportRounds(t *testing.T) {
	run := func(round int, workload, server string, ops float64) *Run {
		return &Run{Workload: workload, Server: server, Round: round, OpsPerSec: ops, ItemsPerSec: ops}
	}
	r := &Report{Rounds: 4, Runs: []*Run{
		run(1, "ping", "uri", 1000), run(1, "ycsb-a", "uri", 600), run(1, "ycsb-a", "compare", 300),
		run(2, "ping", "uri", 2000), run(2, "ycsb-a", "uri", 1000), run(2, "ycsb-a", "compare", 500),
		run(3, "ping", "uri", 1000), run(3, "ycsb-a", "uri", 700), run(3, "ycsb-a", "compare", 350),
		run(4, "ping", "uri", 1000), run(4, "ycsb-a", "uri", 400), run(4, "ycsb-a", "compare", 400),
	}}
	r.finish()
	var pcts []float64
	for _, run := range r.Runs {
		if run.Workload == "ycsb-a" && run.Server == "uri" {
			pcts = append(pcts, run.PctOfPing)
		}
	}
	if want := []float64{60, 50, 70, 40}; !slices.Equal(pcts, want) {
		t.Errorf("shares of ping %v, want %v", pcts, want)
	}
	want := []Median{
		{Workload: "ping", Server: "uri", Runs: 4, OpsPerSec: 1000, ItemsPerSec: 1000},
		{Workload: "ycsb-a", Server: "uri", Runs: 4, OpsPerSec: 650, ItemsPerSec: 650, PctOfPing: 55, MinPct: 40, MaxPct: 70},
		{Workload: "ycsb-a", Server: "compare", Runs: 4, OpsPerSec: 375, ItemsPerSec: 375},
	}
	if len(r.Medians) != len(want) {
		t.Fatalf("medians %+v, want %+v", r.Medians, want)
	}
	for i := range want {
		if r.Medians[i] != want[i] {
			t.Errorf("median %d: %+v, want %+v", i, r.Medians[i], want[i])
		}
	}
	if len(r.Ratios) != 1 || r.Ratios[0].Workload != "ycsb-a" || r.Ratios[0].Ratio != 650.0/375 {
		t.Errorf("ratios %+v, want ycsb-a %v", r.Ratios, 650.0/375)
	}
	var out bytes.Buffer
	printSummary(&out, r)
	for _, s := range []string{"median of 4 rounds", "55%", "40–70%"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, out.String())
		}
	}
}

// TestReportOneRound: a single round has no medians, and its ratios are
// of its runs.
func TestReportOneRound(t *testing.T) {
	r := &Report{Runs: []*Run{
		{Workload: "ping", Server: "uri", OpsPerSec: 1000},
		{Workload: "ycsb-a", Server: "uri", OpsPerSec: 600},
		{Workload: "ycsb-a", Server: "compare", OpsPerSec: 200},
	}}
	r.finish()
	if r.Runs[1].PctOfPing != 60 || len(r.Medians) != 0 || len(r.Ratios) != 1 || r.Ratios[0].Ratio != 3 {
		t.Errorf("share %v, medians %+v, ratios %+v", r.Runs[1].PctOfPing, r.Medians, r.Ratios)
	}
}
