package query

import (
	"math/rand"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// schemaGen draws random $jsonSchema subschemas and values for
// TestJSONSchemaDottedDifferential.
type schemaGen struct{ r *rand.Rand }

func (g schemaGen) scalar() any {
	switch g.r.Intn(8) {
	case 0:
		return int32(g.r.Intn(40) - 10)
	case 1:
		return float64(g.r.Intn(40)) / 4
	case 2:
		return int64(g.r.Intn(30))
	case 3:
		return []string{"", "s", "abc", "sss", "xyz1"}[g.r.Intn(5)]
	case 4:
		return g.r.Intn(2) == 0
	case 5:
		return nil
	case 6:
		return bson.D{{Key: "c", Value: int32(g.r.Intn(3))}}
	}
	return "ab"
}

// value is a field value: a scalar, an array of scalars or a small
// document with fields c and d.
func (g schemaGen) value(depth int) any {
	switch n := g.r.Intn(6); {
	case n == 0 && depth > 0:
		a := bson.A{}
		for i := g.r.Intn(4); i > 0; i-- {
			a = append(a, g.scalar())
		}
		return a
	case n == 1 && depth > 0:
		d := bson.D{}
		for _, k := range []string{"c", "d"} {
			if g.r.Intn(3) > 0 {
				d = append(d, bson.E{Key: k, Value: g.value(depth - 1)})
			}
		}
		return d
	}
	return g.scalar()
}

// schema is a random subschema: a few keywords of every kind, and nested
// schemas to depth.
func (g schemaGen) schema(depth int) bson.D {
	s := bson.D{}
	types := []string{"number", "string", "array", "object", "bool", "null", "int", "double"}
	if g.r.Intn(4) == 0 {
		t := types[g.r.Intn(len(types))]
		if t == "number" || t == "string" || t == "array" || t == "object" || t == "null" {
			s = append(s, bson.E{Key: "type", Value: t})
		} else {
			s = append(s, bson.E{Key: "bsonType", Value: bson.A{t, types[g.r.Intn(4)]}[:1+g.r.Intn(2)]})
		}
	}
	keywords := []func(){
		func() { s = append(s, bson.E{Key: "minimum", Value: int32(g.r.Intn(20) - 5)}) },
		func() {
			s = append(s, bson.E{Key: "maximum", Value: float64(g.r.Intn(20))}, bson.E{Key: "exclusiveMaximum", Value: g.r.Intn(2) == 0})
		},
		func() { s = append(s, bson.E{Key: "multipleOf", Value: int32(1 + g.r.Intn(3))}) },
		func() { s = append(s, bson.E{Key: "minLength", Value: int32(g.r.Intn(4))}) },
		func() { s = append(s, bson.E{Key: "maxLength", Value: int32(g.r.Intn(4))}) },
		func() { s = append(s, bson.E{Key: "pattern", Value: []string{"^s", "b", "^$", "[0-9]"}[g.r.Intn(4)]}) },
		func() { s = append(s, bson.E{Key: "minItems", Value: int32(g.r.Intn(3))}) },
		func() { s = append(s, bson.E{Key: "maxItems", Value: int32(g.r.Intn(3))}) },
		func() { s = append(s, bson.E{Key: "uniqueItems", Value: g.r.Intn(3) > 0}) },
		func() { s = append(s, bson.E{Key: "enum", Value: bson.A{g.scalar(), "zz"}}) },
		func() { s = append(s, bson.E{Key: "required", Value: bson.A{[]string{"c", "d", "c.c"}[g.r.Intn(3)]}}) },
		func() { s = append(s, bson.E{Key: "minProperties", Value: int32(g.r.Intn(3))}) },
		func() { s = append(s, bson.E{Key: "maxProperties", Value: int32(g.r.Intn(3))}) },
		func() { s = append(s, bson.E{Key: "dependencies", Value: bson.D{{Key: "c", Value: bson.A{"d"}}}}) },
		func() {
			if depth > 0 {
				s = append(s, bson.E{Key: "items", Value: g.schema(depth - 1)})
			}
		},
		func() {
			if depth > 0 {
				s = append(s, bson.E{Key: "items", Value: bson.A{g.schema(depth - 1)}}, bson.E{Key: "additionalItems", Value: g.r.Intn(2) == 0})
			}
		},
		func() {
			if depth > 0 {
				s = append(s, bson.E{Key: "properties", Value: bson.D{{Key: "c", Value: g.schema(depth - 1)}}})
			}
		},
		func() {
			if depth > 0 {
				s = append(s, bson.E{Key: "additionalProperties", Value: g.schema(depth - 1)})
			}
		},
		func() {
			if depth > 0 {
				s = append(s, bson.E{Key: "dependencies", Value: bson.D{{Key: "d", Value: g.schema(depth - 1)}}})
			}
		},
		func() {
			if depth > 0 {
				s = append(s, bson.E{Key: "not", Value: g.schema(depth - 1)})
			}
		},
		func() {
			if depth > 0 {
				k := []string{"allOf", "anyOf", "oneOf"}[g.r.Intn(3)]
				s = append(s, bson.E{Key: k, Value: bson.A{g.schema(depth - 1), g.schema(depth - 1)}})
			}
		},
	}
	used := map[string]bool{}
	for n := g.r.Intn(4); n > 0; n-- {
		before := len(s)
		keywords[g.r.Intn(len(keywords))]()
		// a keyword twice is a parse error: keep the first
		for i := before; i < len(s); i++ {
			if used[s[i].Key] {
				s = s[:before]
				break
			}
		}
		for i := before; i < len(s); i++ {
			used[s[i].Key] = true
		}
	}
	return s
}

// TestJSONSchemaDottedDifferential checks MongoDB's reading of a dotted
// property name against Folio's value evaluator: properties: {"a.b": S}
// (required or not) is evaluated keyword by keyword at the path a.b
// (matchesAt), which where a holds one embedded document, or an array of
// copies of it among values without b, must agree with the nested form
// properties: {a: {properties: {b: S}}} applied to {a: <the document>}.
func TestJSONSchemaDottedDifferential(t *testing.T) {
	seed := rand.Int63()
	g := schemaGen{rand.New(rand.NewSource(seed))}
	compile := func(schema bson.D) *Filter {
		raw, err := bson.Marshal(bson.D{{Key: "$jsonSchema", Value: schema}})
		if err != nil {
			t.Fatal(err)
		}
		f, err := Compile(raw)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, bson.Raw(raw), err)
		}
		return f
	}
	doc := func(d bson.D) bson.Raw {
		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	checked := 0
	for i := 0; i < 3000; i++ {
		sub := g.schema(2)
		required := g.r.Intn(3) == 0
		dotted := bson.D{{Key: "properties", Value: bson.D{{Key: "a.b", Value: sub}}}}
		nested := bson.D{{Key: "properties", Value: bson.D{{Key: "a", Value: bson.D{{Key: "properties", Value: bson.D{{Key: "b", Value: sub}}}}}}}}
		if required {
			dotted = append(dotted, bson.E{Key: "required", Value: bson.A{"a.b"}})
			nested = append(nested, bson.E{Key: "required", Value: bson.A{"a"}})
			nested[0].Value.(bson.D)[0].Value = append(nested[0].Value.(bson.D)[0].Value.(bson.D), bson.E{Key: "required", Value: bson.A{"b"}})
		}
		fd, fn := compile(dotted), compile(nested)
		for j := 0; j < 8; j++ {
			inner := bson.D{}
			if g.r.Intn(5) > 0 {
				inner = append(inner, bson.E{Key: "b", Value: g.value(2)})
			}
			if g.r.Intn(3) == 0 {
				inner = append(inner, bson.E{Key: "c", Value: g.scalar()})
			}
			want := fn.Match(doc(bson.D{{Key: "a", Value: inner}}))
			// a.b yields b's value once or more, or nothing, as {a: inner}
			// does; elements without b add none.
			var a any = inner
			switch g.r.Intn(4) {
			case 1:
				a = bson.A{inner}
			case 2:
				a = bson.A{inner, int32(7), inner}
			case 3:
				a = bson.A{bson.D{{Key: "c", Value: int32(1)}}, inner}
			}
			d := doc(bson.D{{Key: "a", Value: a}})
			if got := fd.Match(d); got != want {
				t.Fatalf("seed %d: %s on %s = %v, nested form %s on a's document gives %v", seed, fd.Doc(), d, got, fn.Doc(), want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}
