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

// TestDecimalTrigOracle checks the decimal trigonometric and hyperbolic
// functions against mpmath rounded to 34 digits (testdata/decimal_trig.py
// wrote the file). Values are compared, not exponents.
func TestDecimalTrigOracle(t *testing.T) {
	f, err := os.Open("testdata/decimal_trig.txt")
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
	unary := map[string]func(bson.RawValue) bson.RawValue{
		"sin": DecimalSin, "cos": DecimalCos, "tan": DecimalTan,
		"asin": DecimalAsin, "acos": DecimalAcos, "atan": DecimalAtan,
		"sinh": DecimalSinh, "cosh": DecimalCosh, "tanh": DecimalTanh,
		"asinh": DecimalAsinh, "acosh": DecimalAcosh, "atanh": DecimalAtanh,
	}
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fs := strings.Fields(line)
		var got bson.RawValue
		if fs[0] == "atan2" {
			got = DecimalAtan2(dec(fs[1]), dec(fs[2]))
		} else if fn, ok := unary[fs[0]]; ok {
			got = fn(dec(fs[1]))
		} else {
			t.Fatalf("unknown op in %q", line)
		}
		want := dec(fs[len(fs)-1])
		if got.Type != bson.TypeDecimal128 || CompareNumbers(got, want) != 0 {
			t.Errorf("%s: got %s", line, got)
		}
		n++
	}
	if n < 500 {
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
