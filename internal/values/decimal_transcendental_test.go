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
// them correctly at 34 digits ($log as MongoDB takes it: ln x / ln b, each
// rounded; testdata/decimal_transcendental.py wrote the file). Values are compared, not exponents: a whole result has
// exponent 0 here.
func TestDecimalTranscendentalOracle(t *testing.T) {
	checkDecimalOracle(t, "testdata/decimal_transcendental.txt", 400, func(op string, args []bson.RawValue) (bson.RawValue, bool) {
		switch op {
		case "ln":
			return DecimalLn(args[0]), true
		case "log10":
			return DecimalLog10(args[0]), true
		case "exp":
			return DecimalExp(args[0]), true
		case "log":
			return DecimalLog(args[0], args[1]), true
		case "pow":
			if got, ok := DecimalPowReal(args[0], args[1]); ok {
				return got, true
			}
			t.Errorf("pow %s %s: not computed", args[0], args[1])
			return bson.RawValue{}, true
		}
		return bson.RawValue{}, false
	})
}

// TestDecimalTrigOracle checks the decimal trigonometric and hyperbolic
// functions against mpmath rounded to 34 digits (testdata/decimal_trig.py
// wrote the file). Values are compared, not exponents.
func TestDecimalTrigOracle(t *testing.T) {
	unary := map[string]func(bson.RawValue) bson.RawValue{
		"sin": DecimalSin, "cos": DecimalCos, "tan": DecimalTan,
		"asin": DecimalAsin, "acos": DecimalAcos, "atan": DecimalAtan,
		"sinh": DecimalSinh, "cosh": DecimalCosh, "tanh": DecimalTanh,
		"asinh": DecimalAsinh, "acosh": DecimalAcosh, "atanh": DecimalAtanh,
	}
	checkDecimalOracle(t, "testdata/decimal_trig.txt", 500, func(op string, args []bson.RawValue) (bson.RawValue, bool) {
		if op == "atan2" {
			return DecimalAtan2(args[0], args[1]), true
		}
		if fn, ok := unary[op]; ok {
			return fn(args[0]), true
		}
		return bson.RawValue{}, false
	})
}

// checkDecimalOracle runs the cases of an oracle file, a line each
// ("op arg... want", # comments): eval computes op of the arguments (ok
// false for an unknown op), whose value must equal want; the file must
// hold at least min cases.
func checkDecimalOracle(t *testing.T, file string, min int, eval func(op string, args []bson.RawValue) (bson.RawValue, bool)) {
	t.Helper()
	f, err := os.Open(file)
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
		args := make([]bson.RawValue, 0, len(fs)-2)
		for _, a := range fs[1 : len(fs)-1] {
			args = append(args, dec(a))
		}
		got, ok := eval(fs[0], args)
		if !ok {
			t.Fatalf("unknown op in %q", line)
		}
		if want := dec(fs[len(fs)-1]); got.Type != bson.TypeDecimal128 || CompareNumbers(got, want) != 0 {
			t.Errorf("%s: got %s", line, got)
		}
		n++
	}
	if n < min {
		t.Fatalf("only %d cases", n)
	}
}

// TestDecimalTrigOutsideDomain: an argument the caller should have refused
// gives NaN, never a panic (big.Float's Sqrt of a negative, an infinity
// where a finite value is needed).
func TestDecimalTrigOutsideDomain(t *testing.T) {
	over, _ := bson.ParseDecimal128("1.0000000000000000001")
	under, _ := bson.ParseDecimal128("0.99999999999999999999")
	neg, _ := bson.ParseDecimal128("-1.0000000000000000001")
	for name, v := range map[string]bson.RawValue{
		"asin":    DecimalAsin(DecimalValue(over)),
		"asin-":   DecimalAsin(DecimalValue(neg)),
		"acos":    DecimalAcos(DecimalValue(over)),
		"acos-":   DecimalAcos(DecimalValue(neg)),
		"atanh":   DecimalAtanh(DecimalValue(over)),
		"acosh":   DecimalAcosh(DecimalValue(under)),
		"sin∞":    DecimalSin(DecimalValue(decimalInf(1))),
		"cos∞":    DecimalCos(DecimalValue(decimalInf(-1))),
		"tan∞":    DecimalTan(DecimalValue(decimalInf(1))),
		"asin∞":   DecimalAsin(DecimalValue(decimalInf(1))),
		"acos∞":   DecimalAcos(DecimalValue(decimalInf(-1))),
		"acosh-∞": DecimalAcosh(DecimalValue(decimalInf(-1))),
		"atanh∞":  DecimalAtanh(DecimalValue(decimalInf(1))),
	} {
		if d, ok := v.Decimal128OK(); !ok || !d.IsNaN() {
			t.Errorf("%s: got %s, want NaN", name, v)
		}
	}
}
