package engine

import (
	"bufio"
	"flag"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

var rewritePlans = flag.Bool("rewrite", false, "rewrite the expected output of testdata/plans.txt")

// TestPlanData runs the cases of testdata/plans.txt on the collection of
// planTestEngine. A case is a query (lines "filter <json>", "sort <json>",
// "limit <n>"), a line "----", then what explain says of it: the winning
// plan's stages, its index scan with direction and bounds, and the indexes
// of the rejected plans. Cases are separated by blank lines; lines
// starting with # are comments. With -rewrite the expected output is
// replaced by what the planner now gives.
func TestPlanData(t *testing.T) {
	const path = "testdata/plans.txt"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := planTestEngine(t)
	var out strings.Builder
	blocks := strings.Split(strings.TrimRight(string(data), "\n"), "\n\n")
	for i, block := range blocks {
		if i > 0 {
			out.WriteString("\n")
		}
		input, want, ok := strings.Cut(block, "----\n")
		if !ok {
			input, want = strings.TrimSuffix(block, "----"), ""
		}
		got := explainCase(t, e, input)
		out.WriteString(input + "----\n" + got)
		if !*rewritePlans && strings.TrimSpace(got) != strings.TrimSpace(want) {
			t.Errorf("%s:\n%s----\ngot:\n%swant:\n%s", path, input, got, want)
		}
	}
	if *rewritePlans {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// explainCase runs the query of a case's input through explain and
// describes its plans.
func explainCase(t *testing.T, e *Engine, input string) string {
	t.Helper()
	o := FindOptions{Filter: ext(t, `{}`)}
	sc := bufio.NewScanner(strings.NewReader(input))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, arg, _ := strings.Cut(line, " ")
		switch key {
		case "filter":
			o.Filter = ext(t, arg)
		case "sort":
			o.Sort = ext(t, arg)
		case "limit":
			o.Limit = ext(t, `{"n": `+arg+`}`).Lookup("n").AsInt64()
		default:
			t.Fatalf("unknown line %q", line)
		}
	}
	out, err := e.Explain("test", "p", o, false)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	qp := bson.Raw(bsonDoc(out)).Lookup("queryPlanner").Document()
	var b strings.Builder
	describePlan(&b, "winning", qp.Lookup("winningPlan").Document())
	rejected, _ := qp.Lookup("rejectedPlans").Array().Values()
	for _, r := range rejected {
		describePlan(&b, "rejected", r.Document())
	}
	return b.String()
}

// describePlan writes a plan's stages, root first, and its index scan.
func describePlan(b *strings.Builder, what string, plan bson.Raw) {
	var stages []string
	var scan bson.Raw
	for p := plan; p != nil; {
		stages = append(stages, p.Lookup("stage").StringValue())
		if stages[len(stages)-1] == "IXSCAN" {
			scan = p
		}
		in, ok := p.Lookup("inputStage").DocumentOK()
		if !ok {
			break
		}
		p = in
	}
	b.WriteString(what + ": " + strings.Join(stages, " <- ") + "\n")
	if scan != nil {
		bounds, _ := bson.MarshalExtJSON(scan.Lookup("indexBounds").Document(), false, false)
		b.WriteString("  " + scan.Lookup("indexName").StringValue() + " " + scan.Lookup("direction").StringValue() + " " + string(bounds) + "\n")
	}
}
