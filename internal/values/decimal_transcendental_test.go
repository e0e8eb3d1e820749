package values

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestDecimalTranscendentalOracle checks $exp, $ln, $log10, $log and
// non-whole $pow of decimals against Python's decimal module, which rounds
// them correctly at 34 digits (testdata/decimal_transcendental.py wrote
// the file). Values are compared, not exponents: a whole result has
// exponent 0 here.
func TestDecimalTranscendentalOracle(t *testing.T) {
	f, err := os.Open("testdata/decimal_transcendental.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := func(s string) bson.RawValue {
		d, err := bson.ParseDecimal128(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return DecimalValue(d)
	}
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fs := strings.Fields(line)
		var got bson.RawValue
		switch fs[0] {
		case "ln":
			got = DecimalLn(dec(fs[1]))
		case "log10":
			got = DecimalLog10(dec(fs[1]))
		case "exp":
			got = DecimalExp(dec(fs[1]))
		case "log":
			got = DecimalLog(dec(fs[1]), dec(fs[2]))
		case "pow":
			var ok bool
			if got, ok = DecimalPowReal(dec(fs[1]), dec(fs[2])); !ok {
				t.Errorf("%s: not computed", line)
				continue
			}
		default:
			t.Fatalf("unknown op in %q", line)
		}
		want := dec(fs[len(fs)-1])
		if got.Type != bson.TypeDecimal128 || CompareNumbers(got, want) != 0 {
			t.Errorf("%s: got %s", line, got)
		}
		n++
	}
	if n < 400 {
		t.Fatalf("only %d cases", n)
	}
}
