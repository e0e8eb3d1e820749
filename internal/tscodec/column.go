package tscodec

import (
	"encoding/binary"
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// A column's values are written as runs: a kind, a count, and the values.
// Numbers are zigzag varints of wrapping differences, exact whatever the
// values: a run of int32s, int64s or doubles holds the first value and
// then each value less the one before; a run of dates the first, the
// first difference, then each difference less the one before. A double
// joins a run of scale k only if it is n/10^k for an integer n below 2^53
// that gives back its exact bits.
const (
	runRaw    = 0 // each value's type and BSON
	runDouble = 1 // then the scale k
	runInt32  = 2
	runInt64  = 3
	runDate   = 4
)

const maxScale = 8

var pow10 = [maxScale + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// scaled is v as n/10^k, if it is one exactly.
func scaled(v float64, k int) (int64, bool) {
	x := math.Round(v * pow10[k])
	if !(math.Abs(x) < 1<<53) {
		return 0, false
	}
	n := int64(x)
	return n, math.Float64bits(float64(n)/pow10[k]) == math.Float64bits(v)
}

// minScale is the least scale at which v is exact, or -1.
func minScale(v float64) int {
	for k := 0; k <= maxScale; k++ {
		if _, ok := scaled(v, k); ok {
			return k
		}
	}
	return -1
}

// runKind is the kind of run v belongs to (runDouble only when it is an
// exact decimal).
func runKind(v bson.RawValue) int {
	switch v.Type {
	case bson.TypeInt32:
		return runInt32
	case bson.TypeInt64:
		return runInt64
	case bson.TypeDateTime:
		return runDate
	case bson.TypeDouble:
		if minScale(v.Double()) >= 0 {
			return runDouble
		}
	}
	return runRaw
}

// appendColumn writes v as a column, if it is one: a document whose keys
// are canonical decimal positions, increasing. vals is scratch space.
func appendColumn(out []byte, v bson.RawValue, vals []bson.RawValue, keys []uint64) ([]byte, []bson.RawValue, []uint64, bool) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, vals, keys, false
	}
	vals, keys = vals[:0], keys[:0]
	it := rawdoc.Iterate(v.Value)
	for {
		name, val, ok := it.Next()
		if !ok {
			break
		}
		k, ok := position(name)
		if !ok || len(keys) > 0 && k <= keys[len(keys)-1] {
			return nil, vals, keys, false
		}
		keys, vals = append(keys, k), append(vals, val)
	}
	if len(keys) == 0 {
		return nil, vals, keys, false
	}
	out = binary.AppendUvarint(out, uint64(len(keys)))
	out = binary.AppendUvarint(out, keys[0])
	if keys[len(keys)-1]-keys[0] == uint64(len(keys)-1) {
		out = append(out, 1) // dense
	} else {
		out = append(out, 0)
		for i := 1; i < len(keys); i++ {
			out = binary.AppendUvarint(out, keys[i]-keys[i-1]-1)
		}
	}
	for i := 0; i < len(vals); {
		n, next := appendRun(out, vals[i:])
		out, i = next, i+n
	}
	return out, vals, keys, true
}

// position is a key's value as a canonical decimal below 2^31 (no sign,
// no leading zero).
func position(name []byte) (uint64, bool) {
	if len(name) == 0 || len(name) > 10 || len(name) > 1 && name[0] == '0' {
		return 0, false
	}
	var k uint64
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
		k = k*10 + uint64(c-'0')
	}
	return k, k < 1<<31
}

// appendRun writes a run of the first values, returning how many it took.
func appendRun(out []byte, vals []bson.RawValue) (int, []byte) {
	kind := runKind(vals[0])
	scale := 0
	if kind == runDouble {
		// The run's scale: the largest least scale of the doubles ahead,
		// so that one of two decimals does not end a run of one.
		for _, v := range vals[:min(len(vals), 16)] {
			if v.Type != bson.TypeDouble {
				break
			}
			if k := minScale(v.Double()); k > scale {
				scale = k
			}
		}
		if _, ok := scaled(vals[0].Double(), scale); !ok {
			scale = minScale(vals[0].Double())
		}
	}
	n := 1
	for ; n < len(vals); n++ {
		if kind == runDouble {
			if vals[n].Type != bson.TypeDouble {
				break
			}
			if _, ok := scaled(vals[n].Double(), scale); !ok {
				break
			}
		} else if runKind(vals[n]) != kind {
			break
		}
	}
	out = append(out, byte(kind))
	out = binary.AppendUvarint(out, uint64(n))
	if kind == runRaw {
		for _, v := range vals[:n] {
			out = append(append(out, byte(v.Type)), v.Value...)
		}
		return n, out
	}
	if kind == runDouble {
		out = append(out, byte(scale))
	}
	var prev, prevDelta int64
	for i, v := range vals[:n] {
		var x int64
		switch kind {
		case runDouble:
			x, _ = scaled(v.Double(), scale)
		case runInt32:
			x = int64(v.Int32())
		case runInt64:
			x = v.Int64()
		case runDate:
			x = v.DateTime()
		}
		d := x - prev // wrapping: exact modulo 2^64
		if kind == runDate && i > 0 {
			d, prevDelta = d-prevDelta, d
		}
		out = binary.AppendVarint(out, d)
		prev = x
	}
	return n, out
}

// column decodes a column into out, up to limit bytes in all.
func (r *reader) column(out []byte, limit int) []byte {
	n := r.uvarint()
	key := r.uvarint()
	dense := r.byte()
	if r.err != nil || n == 0 || n > uint64(len(r.b)) || dense > 1 || key >= 1<<31 {
		r.fail()
		return out
	}
	keys := make([]uint64, n)
	keys[0] = key
	for i := uint64(1); i < n; i++ {
		gap := uint64(0)
		if dense == 0 {
			gap = r.uvarint()
		}
		if keys[i] = keys[i-1] + gap + 1; keys[i] >= 1<<31 || keys[i] < keys[i-1] {
			r.fail()
			return out
		}
	}
	at := len(out)
	out = append(out, 0, 0, 0, 0)
	var num [20]byte
	for i := uint64(0); i < n && r.err == nil; {
		kind := r.byte()
		count := r.uvarint()
		if count == 0 || count > n-i {
			r.fail()
			break
		}
		scale := 0
		if kind == runDouble {
			if scale = int(r.byte()); scale > maxScale {
				r.fail()
				break
			}
		}
		var prev, prevDelta int64
		for j := uint64(0); j < count && r.err == nil; j, i = j+1, i+1 {
			elem := func(t bson.Type) {
				out = append(append(append(out, byte(t)), strconv.AppendUint(num[:0], keys[i], 10)...), 0)
			}
			if kind == runRaw {
				t := bson.Type(r.byte())
				_, rest, ok := bsoncore.ReadValue(r.b, bsoncore.Type(t))
				if r.err != nil || !ok {
					r.fail()
					break
				}
				elem(t)
				out = append(out, r.b[:len(r.b)-len(rest)]...)
				r.b = rest
				continue
			}
			d := r.varint()
			if kind == runDate && j > 0 {
				d += prevDelta
				prevDelta = d
			}
			x := prev + d
			prev = x
			switch kind {
			case runDouble:
				elem(bson.TypeDouble)
				out = binary.LittleEndian.AppendUint64(out, math.Float64bits(float64(x)/pow10[scale]))
			case runInt32:
				elem(bson.TypeInt32)
				out = binary.LittleEndian.AppendUint32(out, uint32(x))
			case runInt64:
				elem(bson.TypeInt64)
				out = binary.LittleEndian.AppendUint64(out, uint64(x))
			case runDate:
				elem(bson.TypeDateTime)
				out = binary.LittleEndian.AppendUint64(out, uint64(x))
			default:
				r.fail()
			}
			if len(out) > limit {
				r.fail()
			}
		}
	}
	out = append(out, 0)
	binary.LittleEndian.PutUint32(out[at:], uint32(len(out)-at))
	return out
}
