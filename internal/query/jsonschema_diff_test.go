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

// translation is a subschema at path and the filter of ordinary query
// operators MongoDB's translation of it amounts to (json_schema_parser.cpp)
// where no array ends the path: InternalSchemaType is then $type, and
// InternalSchemaEq of a scalar other than null is $eq.
type translation struct {
	schema bson.D
	filter bson.D
}

// kindAlias is the $type alias of the kind of values a type alias is of,
// for makeRestriction's single-type rule ("" for the others).
func kindAlias(t string) string {
	switch t {
	case "number", "int", "long", "double":
		return "number"
	case "string":
		return "string"
	}
	return ""
}

func (g schemaGen) translated(path string, depth int) translation {
	var s, f bson.D
	clause := func(c bson.D) { f = append(f, bson.E{Key: "$and", Value: bson.A{c}}) }
	single := ""
	if g.r.Intn(3) == 0 {
		aliases := []string{"number", "string", "object", "bool", "null", "int", "double", "long"}
		ts := bson.A{aliases[g.r.Intn(len(aliases))]}
		if g.r.Intn(2) == 0 && ts[0] != "number" {
			if t := aliases[1+g.r.Intn(4)]; t != ts[0] {
				ts = append(ts, t)
			}
		}
		if len(ts) == 1 {
			single = kindAlias(ts[0].(string))
			if single == "" {
				single = "other"
			}
		}
		s = append(s, bson.E{Key: "bsonType", Value: ts})
		clause(bson.D{{Key: path, Value: bson.D{{Key: "$type", Value: ts}}}})
	}
	restrict := func(kind string, expr bson.D) {
		switch {
		case single == kind:
			clause(expr)
		case single != "":
		default:
			clause(bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "$nor", Value: bson.A{bson.D{{Key: path, Value: bson.D{{Key: "$type", Value: kind}}}}}}}, expr}}})
		}
	}
	used := map[string]bool{}
	for n := g.r.Intn(3); n > 0; n-- {
		k := g.r.Intn(7)
		if k >= 4 && depth == 0 {
			k = g.r.Intn(4)
		}
		name := []string{"minimum", "maximum", "pattern", "enum", "not", "anyOf", "oneOf"}[k]
		if used[name] {
			continue
		}
		used[name] = true
		switch name {
		case "minimum":
			m := int32(g.r.Intn(20) - 5)
			s = append(s, bson.E{Key: "minimum", Value: m})
			restrict("number", bson.D{{Key: path, Value: bson.D{{Key: "$gte", Value: m}}}})
		case "maximum":
			m := float64(g.r.Intn(20)) / 2
			ex := g.r.Intn(2) == 0
			s = append(s, bson.E{Key: "maximum", Value: m}, bson.E{Key: "exclusiveMaximum", Value: ex})
			op := "$lte"
			if ex {
				op = "$lt"
			}
			restrict("number", bson.D{{Key: path, Value: bson.D{{Key: op, Value: m}}}})
		case "pattern":
			p := []string{"^s", "b", "^$", "[0-9]"}[g.r.Intn(4)]
			s = append(s, bson.E{Key: "pattern", Value: p})
			restrict("string", bson.D{{Key: path, Value: bson.D{{Key: "$regex", Value: p}}}})
		case "enum":
			vals := bson.A{int32(g.r.Intn(5)), []string{"s", "abc"}[g.r.Intn(2)]}
			if g.r.Intn(2) == 0 {
				vals = vals[:1]
			}
			s = append(s, bson.E{Key: "enum", Value: vals})
			or := bson.A{}
			for _, v := range vals {
				or = append(or, bson.D{{Key: path, Value: bson.D{{Key: "$eq", Value: v}}}})
			}
			clause(bson.D{{Key: "$or", Value: or}})
		case "not":
			sub := g.translated(path, depth-1)
			s = append(s, bson.E{Key: "not", Value: sub.schema})
			clause(bson.D{{Key: "$nor", Value: bson.A{sub.filter}}})
		case "anyOf", "oneOf":
			subs := []translation{g.translated(path, depth-1), g.translated(path, depth-1)}
			s = append(s, bson.E{Key: name, Value: bson.A{subs[0].schema, subs[1].schema}})
			if name == "anyOf" {
				clause(bson.D{{Key: "$or", Value: bson.A{subs[0].filter, subs[1].filter}}})
				break
			}
			clause(bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: "$and", Value: bson.A{subs[0].filter, bson.D{{Key: "$nor", Value: bson.A{subs[1].filter}}}}}},
				bson.D{{Key: "$and", Value: bson.A{subs[1].filter, bson.D{{Key: "$nor", Value: bson.A{subs[0].filter}}}}}},
			}}})
		}
	}
	if s == nil {
		s = bson.D{}
	}
	if f == nil {
		f = bson.D{}
	}
	return translation{s, f}
}

// TestJSONSchemaDottedTranslationDifferential checks properties:
// {"a.b": S} across arrays, where each keyword is satisfied by a value of
// its own, against the ordinary query operators MongoDB's translation
// amounts to when no array ends the path ($type for
// $_internalSchemaType, $gte/$lte/$regex under (OR (NOT type) ...), $eq
// for enum, $nor for not, $or for anyOf and oneOf's exclusive or),
// evaluated by the filter matcher.
func TestJSONSchemaDottedTranslationDifferential(t *testing.T) {
	seed := rand.Int63()
	g := schemaGen{rand.New(rand.NewSource(seed))}
	compile := func(d bson.D) *Filter {
		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Compile(raw)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, bson.Raw(raw), err)
		}
		return f
	}
	scalar := func() any {
		for {
			// no arrays: an array at a.b is where $type and
			// $_internalSchemaType part
			if v := g.scalar(); v != nil || g.r.Intn(2) == 0 {
				return v
			}
		}
	}
	for i := 0; i < 2000; i++ {
		tr := g.translated("a.b", 2)
		schema := bson.D{{Key: "properties", Value: bson.D{{Key: "a.b", Value: tr.schema}}}}
		want := bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "a.b", Value: bson.D{{Key: "$exists", Value: false}}}}, tr.filter}}}
		if g.r.Intn(3) == 0 {
			schema = append(schema, bson.E{Key: "required", Value: bson.A{"a.b"}})
			want = bson.D{{Key: "a.b", Value: bson.D{{Key: "$exists", Value: true}}}, {Key: "$and", Value: bson.A{tr.filter}}}
		}
		fs, ff := compile(bson.D{{Key: "$jsonSchema", Value: schema}}), compile(want)
		for j := 0; j < 10; j++ {
			var a any
			switch g.r.Intn(4) {
			case 0:
				a = bson.D{{Key: "b", Value: scalar()}}
			case 1:
				a = scalar()
			default:
				arr := bson.A{}
				for k := 1 + g.r.Intn(3); k > 0; k-- {
					switch g.r.Intn(4) {
					case 0:
						arr = append(arr, scalar())
					case 1:
						arr = append(arr, bson.D{{Key: "c", Value: int32(1)}})
					default:
						arr = append(arr, bson.D{{Key: "b", Value: scalar()}})
					}
				}
				a = arr
			}
			raw, err := bson.Marshal(bson.D{{Key: "a", Value: a}})
			if err != nil {
				t.Fatal(err)
			}
			if got, w := fs.Match(raw), ff.Match(raw); got != w {
				t.Fatalf("seed %d: %s on %s = %v, its translation %s gives %v", seed, fs.Doc(), bson.Raw(raw), got, ff.Doc(), w)
			}
		}
	}
}
