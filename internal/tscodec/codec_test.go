package tscodec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// bucket is a bucket of n measurements as the time series insert path
// builds it: a time 1 s apart and metrics of two decimals drifting.
func bucket(n int, seed uint64) bson.Raw {
	r := rand.New(rand.NewPCG(seed, 1))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cols := bson.D{}
	tcol := bson.D{}
	for i := range n {
		tcol = append(tcol, bson.E{Key: fmt.Sprint(i), Value: start.Add(time.Duration(i) * time.Second)})
	}
	cols = append(cols, bson.E{Key: "t", Value: tcol})
	for m := range 10 {
		col, level := bson.D{}, r.Float64()*100
		for i := range n {
			level += r.NormFloat64()
			col = append(col, bson.E{Key: fmt.Sprint(i), Value: float64(int(level*100)) / 100})
		}
		cols = append(cols, bson.E{Key: fmt.Sprintf("m%d", m), Value: col})
	}
	return mustMarshal(bson.D{{Key: "_id", Value: bson.NewObjectIDFromTimestamp(start)},
		{Key: "control", Value: bson.D{{Key: "version", Value: 1}}}, {Key: "meta", Value: "host001"}, {Key: "data", Value: cols}})
}

func mustMarshal(v any) bson.Raw {
	b, err := bson.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func col(vals ...any) bson.D {
	d := bson.D{}
	for i, v := range vals {
		d = append(d, bson.E{Key: fmt.Sprint(i), Value: v})
	}
	return d
}

func TestRoundTrip(t *testing.T) {
	now := time.Unix(1700000000, 0)
	cases := []struct {
		name       string
		doc        any
		compressed bool
	}{
		{"bucket", bucket(1000, 1), true},
		{"one measurement", bucket(1, 2), true},
		{"gaps", bson.D{{Key: "data", Value: bson.D{{Key: "a", Value: bson.D{{Key: "0", Value: 1.5}, {Key: "3", Value: 2.5}, {Key: "10", Value: 3.25}}}}}}, true},
		{"mixed types", bson.D{{Key: "data", Value: bson.D{{Key: "a", Value: col(1.25, int32(3), "s", nil, bson.D{{Key: "x", Value: 1}}, int64(7), now, 2.5, true)}}}}, true},
		{"special doubles", bson.D{{Key: "data", Value: bson.D{{Key: "a", Value: col(math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e300, 5e-324, 0.1, 1.0/3, 123456789.123)}}}}, true},
		{"int extremes", bson.D{{Key: "data", Value: bson.D{{Key: "a", Value: col(int64(math.MinInt64), int64(math.MaxInt64), int64(0), int64(math.MinInt64))},
			{Key: "b", Value: col(int32(math.MinInt32), int32(math.MaxInt32), int32(math.MinInt32))},
			{Key: "d", Value: col(time.UnixMilli(math.MinInt64/1000), time.UnixMilli(math.MaxInt64/1000), now, now)}}}}, true},
		{"non-canonical keys", bson.D{{Key: "data", Value: bson.D{{Key: "a", Value: bson.D{{Key: "01", Value: 1.0}}}, {Key: "b", Value: bson.D{{Key: "-1", Value: 1.0}}},
			{Key: "c", Value: bson.D{{Key: "2", Value: 1.0}, {Key: "1", Value: 2.0}}}, {Key: "d", Value: bson.D{{Key: "1", Value: 1.0}, {Key: "1", Value: 2.0}}},
			{Key: "e", Value: col(1.5, 2.5)}}}}, true},
		{"no columns", bson.D{{Key: "data", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: bson.D{}}}}}, false},
		{"empty data", bson.D{{Key: "data", Value: bson.D{}}}, false},
		{"data not a document", bson.D{{Key: "data", Value: bson.A{1, 2}}}, false},
		{"no data", bson.D{{Key: "a", Value: 1}}, false},
		{"fields after data", bson.D{{Key: "_id", Value: 1}, {Key: "data", Value: bson.D{{Key: "a", Value: col(1.0, 2.0, 3.0, 4.0)}}}, {Key: "z", Value: "after"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, ok := c.doc.(bson.Raw)
			if !ok {
				doc = mustMarshal(c.doc)
			}
			enc := encode(doc)
			if (enc != nil) != c.compressed || (Encode(doc) != nil) != c.compressed {
				t.Fatalf("compressed %v, want %v", enc != nil, c.compressed)
			}
			if enc == nil {
				return
			}
			if !Encoded(enc) || Encoded(doc) || DecodedLen(enc) != len(doc) {
				t.Fatalf("Encoded %v %v, DecodedLen %d of %d", Encoded(enc), Encoded(doc), DecodedLen(enc), len(doc))
			}
			back, err := Decode([]byte("prefix"), enc)
			if err != nil || !bytes.Equal(back, doc) {
				t.Fatalf("decoded %v %v, want %v", err, back, doc)
			}
		})
	}
}

// A bucket of 1000 measurements takes a few bytes a value.
func TestBucketSize(t *testing.T) {
	doc := bucket(1000, 3)
	enc := Encode(doc)
	perMeasurement := float64(len(enc)) / 1000
	t.Logf("%d bytes as BSON, %d encoded: %.1f bytes a measurement (11 values)", len(doc), len(enc), perMeasurement)
	if perMeasurement > 25 {
		t.Fatalf("%.1f bytes a measurement, want at most 25", perMeasurement)
	}
}

// Corrupt input (storage checksums make it unlikely) fails or decodes to
// the length the header gives, without a panic; truncated input fails.
func TestDecodeCorrupt(t *testing.T) {
	enc := Encode(bucket(50, 4))
	for i := range enc {
		for _, b := range []byte{0, 1, 0x7f, 0x80, 0xff} {
			c := bytes.Clone(enc)
			c[i] = b
			if doc, err := Decode(nil, c); err == nil && len(doc) != DecodedLen(c) {
				t.Fatalf("byte %d set to %#x: no error, but %d bytes of %d", i, b, len(doc), DecodedLen(c))
			}
		}
		if _, err := Decode(nil, enc[:i]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", i)
		}
	}
}

// FuzzRoundTrip checks encode (Encode without its guard) on any
// document.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(bucket(20, 5)))
	f.Add([]byte(mustMarshal(bson.D{{Key: "data", Value: bson.D{{Key: "a", Value: col(1.5, "x", int64(3), int32(2), time.Unix(0, 0), math.NaN())}}}})))
	f.Fuzz(func(t *testing.T, b []byte) {
		if bson.Raw(b).Validate() != nil {
			return
		}
		enc := encode(b)
		if enc == nil {
			return
		}
		back, err := Decode(nil, enc)
		if err != nil || !bytes.Equal(back, b) || DecodedLen(enc) != len(b) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzColumn builds a column from the input, 10 bytes a value (a kind, a
// gap before its key, 8 bytes of value), so that every input is a bucket
// (random bytes are seldom valid BSON for FuzzRoundTrip), and checks
// encode's round trip.
func FuzzColumn(f *testing.F) {
	f.Add([]byte("\x01\x00\x10\x27\x00\x00\x00\x00\x00\x00\x01\x02\x11\x27\x00\x00\x00\x00\x00\x00"))
	f.Add(bytes.Repeat([]byte("\x04\x00\xe8\x03\x00\x00\x00\x00\x00\x00\x05\x01\x8b\x0c\x00\x00\x00\x00\x00\x00"), 4))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := bson.D{}
		for key := uint64(0); len(b) >= 10; b = b[10:] {
			x := binary.LittleEndian.Uint64(b[2:])
			var v any
			switch b[0] % 7 {
			case 0:
				v = math.Float64frombits(x)
			case 1: // a decimal of 0 to 9 places
				v = float64(int64(x)>>(x%64)) / math.Pow10(int(b[0]/7%10))
			case 2:
				v = int32(x)
			case 3:
				v = int64(x)
			case 4:
				v = bson.DateTime(int64(x))
			case 5: // a date near the key's second
				v = bson.DateTime(int64(int16(x)) + int64(key)*1000)
			case 6:
				v = nil
			}
			d = append(d, bson.E{Key: strconv.FormatUint(key, 10), Value: v})
			key += 1 + uint64(b[1]%4)
		}
		if len(d) == 0 {
			return
		}
		doc := mustMarshal(bson.D{{Key: "data", Value: bson.D{{Key: "c", Value: d}}}})
		enc := encode(doc)
		if enc == nil {
			return // not smaller than the document
		}
		if back, err := Decode(nil, enc); err != nil || !bytes.Equal(back, doc) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(bucket(20, 6)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if doc, err := Decode(nil, b); err == nil && len(doc) != DecodedLen(b) {
			t.Fatalf("no error, but %d bytes of %d", len(doc), DecodedLen(b))
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	doc := bucket(1000, 7)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Encode(doc)
	}
}

func BenchmarkDecode(b *testing.B) {
	doc := bucket(1000, 7)
	enc := Encode(doc)
	b.SetBytes(int64(len(doc)))
	var buf []byte
	for b.Loop() {
		buf, _ = Decode(buf[:0], enc)
	}
}
