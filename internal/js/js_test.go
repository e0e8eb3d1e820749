package js

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func mustCompile(t *testing.T, src string) *Func {
	t.Helper()
	f, err := Compile(src)
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	return f
}

func raw(t *testing.T, v any) bson.RawValue {
	t.Helper()
	if v == nil {
		return bson.RawValue{Type: bson.TypeNull}
	}
	typ, b, err := bson.MarshalValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return bson.RawValue{Type: typ, Value: b}
}

func code(err error) mongoerr.Code {
	var me *mongoerr.Error
	if errors.As(err, &me) {
		return me.Code
	}
	return -1
}

// TestRoundTrip: every BSON type crosses into JavaScript and back as
// MongoDB maps it (int32 and double become numbers, returned as doubles).
func TestRoundTrip(t *testing.T) {
	op := &Op{Engine: New(Options{}), Ctx: context.Background()}
	id := bson.NewObjectID()
	dec, _ := bson.ParseDecimal128("1.50")
	when := time.UnixMilli(1700000000123).UTC()
	same := []any{
		"s", 2.5, true, nil, id, int64(1) << 60, int64(-7), dec, bson.DateTime(when.UnixMilli()),
		bson.Binary{Subtype: 4, Data: []byte("0123456789abcdef")}, bson.Timestamp{T: 5, I: 9},
		bson.Regex{Pattern: "^a.b", Options: "im"}, bson.Regex{Pattern: "a b", Options: "ix"},
		bson.MinKey{}, bson.MaxKey{}, bson.Undefined{}, bson.JavaScript("function(){}"),
		bson.D{{Key: "z", Value: 1.0}, {Key: "a", Value: bson.D{{Key: "y", Value: "x"}}}, {Key: "m", Value: 2.0}},
		bson.A{1.0, "two", bson.A{}, bson.D{}},
		bson.D{{Key: "$ref", Value: "c"}, {Key: "$id", Value: id}},
	}
	f := mustCompile(t, "function(x){ return x; }")
	for _, v := range same {
		in := raw(t, v)
		out, err := op.Call(f, nil, in)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if out.Type != in.Type || !out.Equal(in) {
			t.Errorf("%v: got %v (%v), want %v (%v)", v, out, out.Type, in, in.Type)
		}
	}
	// A document keeps its field order, integer-like names included,
	// whether returned whole, read, changed or rebuilt.
	for _, src := range []string{
		"function(x) { return x; }",
		"function(x) { x.b; return x; }",
		"function(x) { x.z = 4; delete x.b; return x; }",
		"function(x) { var o = {}; for (var k in x) o[k] = x[k]; return Object.keys(x).join(); }",
	} {
		out, err := op.Call(mustCompile(t, src), nil, raw(t, bson.D{{Key: "b", Value: 1.0}, {Key: "10", Value: 2.0}, {Key: "2", Value: 3.0}}))
		want := map[string]any{
			"function(x) { return x; }":                      bson.D{{Key: "b", Value: 1.0}, {Key: "10", Value: 2.0}, {Key: "2", Value: 3.0}},
			"function(x) { x.b; return x; }":                 bson.D{{Key: "b", Value: 1.0}, {Key: "10", Value: 2.0}, {Key: "2", Value: 3.0}},
			"function(x) { x.z = 4; delete x.b; return x; }": bson.D{{Key: "10", Value: 2.0}, {Key: "2", Value: 3.0}, {Key: "z", Value: 4.0}},
		}[src]
		if want == nil {
			want = "b,10,2"
		}
		if w := raw(t, want); err != nil || !out.Equal(w) {
			t.Errorf("%s: got %v %v, want %v", src, out, err, w)
		}
	}
	var out bson.RawValue
	var err error
	// int32 is a number: it comes back as a double.
	out, err = op.Call(f, nil, raw(t, int32(5)))
	if err != nil || out.Type != bson.TypeDouble || out.Double() != 5 {
		t.Errorf("int32: %v %v", out, err)
	}
}

// TestConstructors: values scripts build map to their BSON types.
func TestConstructors(t *testing.T) {
	op := &Op{Engine: New(Options{}), Ctx: context.Background()}
	dec, _ := bson.ParseDecimal128("12.34")
	id, _ := bson.ObjectIDFromHex("5f0000000000000000000001")
	cases := []struct {
		src  string
		want any
	}{
		{"NumberInt(7)", int32(7)},
		{"NumberLong('9007199254740993')", int64(9007199254740993)},
		{"NumberDecimal('12.34')", dec},
		{"new ObjectId('5f0000000000000000000001')", id},
		{"ObjectId('5f0000000000000000000001').getTimestamp()", bson.DateTime(0x5f000000 * 1000)},
		{"new Date(86400000)", bson.DateTime(86400000)},
		{"/ab+/i", bson.Regex{Pattern: "ab+", Options: "i"}},
		{"BinData(0, 'AQID')", bson.Binary{Subtype: 0, Data: []byte{1, 2, 3}}},
		{"Timestamp(1, 2)", bson.Timestamp{T: 1, I: 2}},
		{"MinKey()", bson.MinKey{}},
		{"MaxKey()", bson.MaxKey{}},
		{"undefined", bson.Undefined{}},
		{"null", nil},
		{"3", 3.0},
		{"'x' + 1", "x1"},
		{"Array.sum([1, 2, 3])", 6.0},
		{"Array.avg([1, 2, 3])", 2.0},
		{"Array.contains([1, 2], 2)", true},
		{"Array.unique([1, 1, 2]).length", 2.0},
		{"tojson({a: NumberLong(5)})", `{ "a" : NumberLong(5) }`},
		{"DBRef('c', 1)", bson.D{{Key: "$ref", Value: "c"}, {Key: "$id", Value: 1.0}}},
		{"({b: 1, a: [2]})", bson.D{{Key: "b", Value: 1.0}, {Key: "a", Value: bson.A{2.0}}}},
		{"NumberLong(5) + 1", 6.0},
		{"hex_md5('abc')", "900150983cd24fb0d6963f7d28e17f72"},
		// BinData's free functions (agg_infinite_recursion.js)
		{"UUID('81fd5473-1747-4c9d-8743-f10642b3bb99')", bson.Binary{Subtype: 4, Data: []byte{0x81, 0xfd, 0x54, 0x73, 0x17, 0x47, 0x4c, 0x9d, 0x87, 0x43, 0xf1, 0x06, 0x42, 0xb3, 0xbb, 0x99}}},
		{"UUID('81fd547317474c9d8743f10642b3bb99')", bson.Binary{Subtype: 3, Data: []byte{0x81, 0xfd, 0x54, 0x73, 0x17, 0x47, 0x4c, 0x9d, 0x87, 0x43, 0xf1, 0x06, 0x42, 0xb3, 0xbb, 0x99}}},
		{"UUID().length()", 16.0},
		{"UUID('81fd5473-1747-4c9d-8743-f10642b3bb99').toString()", `UUID("81fd5473-1747-4c9d-8743-f10642b3bb99")`},
		{"new HexData(4, '81fd547317474c9d8743f10642b3bb99').hex()", "81fd547317474c9d8743f10642b3bb99"},
		{"HexData(7, 'abcdef01')", bson.Binary{Subtype: 7, Data: []byte{0xab, 0xcd, 0xef, 1}}},
		{"HexData(0, '')", bson.Binary{Subtype: 0, Data: []byte{}}},
		{"MD5('0123456789abcdef0123456789ABCDEF')", bson.Binary{Subtype: 5, Data: []byte{1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}}},
		{"BinData(0, 'AQID').hex()", "010203"},
	}
	for _, c := range cases {
		got, err := op.Call(mustCompile(t, c.src), nil)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		want := raw(t, c.want)
		if got.Type != want.Type || !got.Equal(want) {
			t.Errorf("%s: got %v (%v), want %v (%v)", c.src, got, got.Type, want, want.Type)
		}
	}
}

// TestWhere: this and obj are the document.
func TestWhere(t *testing.T) {
	op := &Op{Engine: New(Options{}), Ctx: context.Background()}
	doc, _ := bson.Marshal(bson.D{{Key: "a", Value: int32(2)}, {Key: "b", Value: "x"}, {Key: "f", Value: bson.JavaScript("function(x) { return x * 2; }")}})
	cases := []struct {
		src  string
		want bool
	}{
		// code is a function, as MongoDB's ValueReader makes it
		{"typeof this.f == 'function' && this.f(3) == 6", true},
		{"this.a == 2", true},
		{"obj.a == 2 && obj.b == 'x'", true},
		{"return this.a > 5", false},
		{"function() { return this.b.length === 1; }", true},
		{"var n = 0; for (var k in this) n++; return n == 3", true},
		// a body's last expression statement is returned, not its first
		// line's (where2.js, where3.js, mr_comments.js)
		{"\nthis.a == 2", true},
		{"x = this.a; x == 5;", false},
		{"x = this.a;\nx == 2", true},
		{"((this.a == 2) && (5 == 5));", true},
		{"(this.a == 5)", false},
		{"// a comment\n\n  // another\n  this.a == 2\n", true},
		{"// a comment\nfunction() {\n  return this.a == 2\n}\n", true},
		{"function named() { return this.a == 2 }", true},
		{"if (this.a == 2) return true; return false", true},
		{"var y = this.a; if (y == 2) { y = 0 }", false},
		// assert.js and $where's fullObject (where5.js, js4.js)
		{"assert(this.a == 2, 'a'); assert.eq(2, obj.a); assert.eq({x: NumberInt(1)}, {x: 1}); assert.neq(1, this.a); assert.gte(this.a, 2); assert.lt(1, 2); assert.isnull(this.z); assert.docEq({p: 1, q: 2}, {q: 2, p: 1}); assert.contains(2, [1, 2]); assert.hasFields(this, ['a', 'b']); return fullObject === true", true},
		// no globals MongoDB's scope lacks: emit is the map's only
		// (js_global_scope.js); the prelude's hooks still serve it
		{"typeof emit == 'undefined' && typeof __bsonsize == 'undefined' && typeof __newObjectId == 'undefined' && typeof GoError == 'undefined' && typeof BSONRegExp == 'undefined' && Object.bsonsize({}) == 5 && ObjectId().str.length == 24", true},
		{"printjsononeline(this.a); return tojsononeline({a: [1, 'x']}) == '{ \"a\" : [ 1, \"x\" ] }'", true},
	}
	for _, c := range cases {
		got, err := op.Test(mustCompile(t, c.src), doc)
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v", c.src, got, err)
		}
	}
}

// TestFailures: script errors, sandbox escapes, endless loops, unbounded
// allocation and results BSON cannot hold fail with MongoDB's codes, and
// the engine keeps working afterwards.
func TestFailures(t *testing.T) {
	e := New(Options{MemoryLimit: 64 << 20})
	cases := []struct {
		name, src string
		ctx       func() (context.Context, context.CancelFunc)
		code      mongoerr.Code
		msg       string
	}{
		{"throw", "throw new Error('boom')", nil, mongoerr.JSInterpreterFailure, "Error: boom :\n"},
		{"reference", "this.a.b.c", nil, mongoerr.JSInterpreterFailure, "TypeError"},
		{"require", "require('fs')", nil, mongoerr.JSInterpreterFailure, "ReferenceError: require is not defined"},
		{"load", "load('/etc/passwd')", nil, mongoerr.JSInterpreterFailure, "ReferenceError: load is not defined"},
		{"process", "process.exit(1)", nil, mongoerr.JSInterpreterFailure, "ReferenceError: process is not defined"},
		{"run", "run('ls')", nil, mongoerr.JSInterpreterFailure, "ReferenceError"},
		{"recursion", "function f(){ return f() + 1; } return f()", nil, mongoerr.JSInterpreterFailure, "too much recursion"},
		{"recursionUUID", "function f(){ UUID('81fd5473-1747-4c9d-8743-f10642b3bb99'); return f() + 1; } return f()", nil, mongoerr.JSInterpreterFailure, "too much recursion"},
		{"uuidArgs", "UUID('a', 'b')", nil, mongoerr.JSInterpreterFailure, "Error: UUID needs 0 or 1 arguments"},
		{"uuidString", "UUID('zz')", nil, mongoerr.JSInterpreterFailure, "Error: Invalid UUID string: zz"},
		{"md5Length", "MD5('ab')", nil, mongoerr.JSInterpreterFailure, "Error: MD5 string must have 32 characters"},
		{"hexArgs", "HexData(0)", nil, mongoerr.JSInterpreterFailure, "Error: HexData needs 2 arguments"},
		{"hexSubtype", "HexData(256, 'ab')", nil, mongoerr.JSInterpreterFailure, "Error: HexData subtype must be a Number between 0 and 255 inclusive"},
		{"hexOdd", "HexData(0, 'abc')", nil, mongoerr.JSInterpreterFailure, "Error: BinData hex string must be an even length"},
		{"hexDigit", "HexData(0, 'zz')", nil, mongoerr.JSInterpreterFailure, "Error: Invalid hex character in string"},
		{"hexString", "HexData(0, 12)", nil, mongoerr.JSInterpreterFailure, "Error: BinData data must be a String"},
		{"maxTime", "while (true) {}", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, mongoerr.MaxTimeMSExpired, ""},
		{"sleep", "sleep(60000)", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, mongoerr.MaxTimeMSExpired, ""},
		{"killed", "for (;;) {}", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, mongoerr.Interrupted, ""},
		{"repeat", "'x'.repeat(1 << 30)", nil, mongoerr.JSInterpreterFailure, "Out of memory"},
		{"repeatCaught", "try { 'x'.repeat(1 << 30) } catch (e) {} return 1", nil, mongoerr.JSInterpreterFailure, "Out of memory"},
		{"grow", "var a = []; for (;;) a.push('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' + a.length);", nil, mongoerr.JSInterpreterFailure, "Out of memory"},
		{"double", "var s = 'xxxxxxxx'; for (;;) s = s + s + '';", nil, mongoerr.JSInterpreterFailure, "Out of memory"},
		// Results that are no BSON: once written as invalid documents.
		{"nulProperty", "var o = {}; o['a' + String.fromCharCode(0)] = 1; return {x: o}", nil, mongoerr.JSPropertyNullChar, "contains a null char"},
		{"cycle", "var o = {}; o.self = o; return o", nil, mongoerr.JSObjectTooDeep, "Do you have a cycle?"},
		// assert.js's failures (the server scope's assert)
		{"assert", "assert(false, 'why')", nil, mongoerr.JSInterpreterFailure, "Error: assert failed : why :\n"},
		{"assertEq", "assert.eq(1, 2, 'x')", nil, mongoerr.JSInterpreterFailure, "Error: [1] != [2] are not equal : x :\n"},
		{"assertNeq", "assert.neq(1, 1)", nil, mongoerr.JSInterpreterFailure, "Error: [1] != [1] are equal :\n"},
		{"assertGte", "assert.gte(1, 2, () => 'f')", nil, mongoerr.JSInterpreterFailure, "Error: 1 is not greater than or eq 2 : f :\n"},
		{"assertIsnull", "assert.isnull(1, 'm')", nil, mongoerr.JSInterpreterFailure, "Error: supposed to be null (m) was: 1 :\n"},
		{"assertArgs", "assert(true, 'a', 'b')", nil, mongoerr.JSInterpreterFailure, "Error: Too many parameters to assert()."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if c.ctx != nil {
				ctx, cancel = c.ctx()
			}
			defer cancel()
			f, err := Compile(c.src)
			if err == nil {
				_, err = (&Op{Engine: e, Ctx: ctx}).Call(f, nil)
			}
			if code(err) != c.code || !strings.Contains(errMsg(err), c.msg) {
				t.Fatalf("got %v (code %d), want code %d containing %q", err, code(err), c.code, c.msg)
			}
		})
	}
	got, err := (&Op{Engine: e}).Call(mustCompile(t, "1 + 1"), nil)
	if err != nil || got.Double() != 2 {
		t.Fatalf("engine after failures: %v %v", got, err)
	}
}

func errMsg(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSyntaxError(t *testing.T) {
	_, err := Compile("function( {")
	if code(err) != mongoerr.JSInterpreterFailure || !strings.Contains(err.Error(), "SyntaxError") {
		t.Fatalf("got %v", err)
	}
}

// TestPooled: calls reuse VMs.
func TestPooled(t *testing.T) {
	e := New(Options{})
	op := &Op{Engine: e}
	f := mustCompile(t, "n = (typeof n == 'undefined' ? 0 : n) + 1; return n")
	for i := 0; i < 3; i++ {
		if _, err := op.Call(f, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.pool("")); n != 1 {
		t.Fatalf("pool holds %d VMs, want 1", n)
	}
	// another pool (database, user) gets a VM of its own
	other := &Op{Engine: e, Pool: "db2"}
	got, err := other.Call(mustCompile(t, "typeof n"), nil)
	if err != nil || got.StringValue() != "undefined" {
		t.Fatalf("other pool sees the first pool's global: %v %v", got, err)
	}
}

// TestConcurrent: calls from many goroutines share the pool safely, each
// seeing its own document.
func TestConcurrent(t *testing.T) {
	op := &Op{Engine: New(Options{}), Ctx: context.Background()}
	f := mustCompile(t, "this.n * 2 == this.want")
	errc := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func(g int) {
			for i := 0; i < 200; i++ {
				doc, _ := bson.Marshal(bson.D{{Key: "n", Value: g*1000 + i}, {Key: "want", Value: 2 * (g*1000 + i)}})
				ok, err := op.Test(f, doc)
				if err == nil && !ok {
					err = errors.New("wrong document seen")
				}
				if err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}
