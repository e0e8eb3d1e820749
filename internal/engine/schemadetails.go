package engine

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/regex"
	"github.com/folio-db/folio/internal/values"
)

// schemaKeywordReasons are the reasons MongoDB gives when a $jsonSchema
// keyword that tests one value fails.
var schemaKeywordReasons = map[string]string{
	"bsonType": "type did not match", "type": "type did not match",
	"minimum": "comparison failed", "maximum": "comparison failed",
	"minLength": "specified string length was not satisfied", "maxLength": "specified string length was not satisfied",
	"pattern": "regular expression did not match", "enum": "value was not found in enum",
	"multipleOf": "considered value is not a multiple of the specified value",
	"minItems":   "array did not match specified length", "maxItems": "array did not match specified length",
	"uniqueItems": "found a duplicate item",
}

// exclusiveOf names the keyword that makes a bound exclusive.
var exclusiveOf = map[string]string{"minimum": "exclusiveMinimum", "maximum": "exclusiveMaximum"}

// schemaRuleOrder is the order of the rules of one schema in MongoDB's
// translation of it (json_schema_parser.cpp: string and number keywords,
// array keywords, object keywords, logical keywords, then the type), which
// its schemaRulesNotSatisfied follows.
var schemaRuleOrder = [...]string{
	"pattern", "maxLength", "minLength", "multipleOf", "maximum", "minimum",
	"minItems", "maxItems", "uniqueItems", "items", "additionalItems", "encrypt",
	"properties", "additionalProperties", "patternProperties", "required", "minProperties", "maxProperties", "dependencies",
	"allOf", "anyOf", "oneOf", "not", "enum",
	"bsonType", "type",
}

// schemaErrors lists the rules of schema that v does not satisfy, each
// as MongoDB's schemaRulesNotSatisfied describes it, in MongoDB's order.
func schemaErrors(schema bson.Raw, v bson.RawValue) bson.A {
	out := bson.A{}
	for _, k := range schemaRuleOrder {
		spec, err := schema.LookupErr(k)
		if err != nil || !keywordFails(schema, k, spec, v) {
			continue
		}
		specified := bson.D{{Key: k, Value: spec}}
		if ex := exclusiveOf[k]; ex != "" {
			if b, ok := schema.Lookup(ex).BooleanOK(); ok {
				specified = append(specified, bson.E{Key: ex, Value: b})
			}
		}
		switch k {
		case "required":
			// translateRequired checks the names in sorted order
			out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "specifiedAs", Value: specified}, {Key: "missingProperties", Value: missingProperties(spec, v, true)}})
		case "properties":
			out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "propertiesNotSatisfied", Value: propertiesErrors(spec, v)}})
		case "additionalProperties":
			out = append(out, additionalPropertiesError(schema, spec, v))
		case "patternProperties":
			out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "details", Value: patternPropertiesErrors(spec, v)}})
		case "oneOf":
			if matching := matchingSubschemas(spec, v); len(matching) > 0 {
				out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "reason", Value: "more than one subschema matched"}, {Key: "matchingSchemaIndexes", Value: matching}})
				break
			}
			fallthrough
		case "allOf", "anyOf":
			out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "schemasNotSatisfied", Value: subschemaErrors(spec, v)}})
		case "items", "additionalItems":
			out = append(out, itemsError(schema, k, spec, v))
		case "not":
			// Its subschema matched: MongoDB does not explain it further.
			out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "reason", Value: "child expression matched"}})
		case "dependencies":
			out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "failingDependencies", Value: dependenciesErrors(spec, v)}})
		case "encrypt":
			// not a BinData of subtype 6, or not one of encrypt's bsonType
			reason := "value was not encrypted"
			if sub, _, _ := v.BinaryOK(); v.Type == bson.TypeBinary && sub == bson.TypeBinaryEncrypted {
				reason = "encrypted value has wrong type"
			}
			out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "reason", Value: reason}})
		case "minProperties", "maxProperties":
			doc, _ := v.DocumentOK()
			elems, _ := doc.Elements()
			out = append(out, bson.D{{Key: "operatorName", Value: k}, {Key: "specifiedAs", Value: specified},
				{Key: "reason", Value: "specified number of properties was not satisfied"}, {Key: "numberOfProperties", Value: int32(len(elems))}})
		default:
			d := bson.D{{Key: "operatorName", Value: k}, {Key: "specifiedAs", Value: specified}}
			if types := keywordExpectedTypes[k]; types != nil && restrictsAll(schema, k) && !ofRestrictedKind(k, v) {
				d = append(d, bson.E{Key: "reason", Value: "type did not match"}, bson.E{Key: "consideredType", Value: values.TypeName(v.Type)})
				if len(types) == 1 {
					d = append(d, bson.E{Key: "expectedType", Value: types[0]})
				} else {
					d = append(d, bson.E{Key: "expectedTypes", Value: types})
				}
				out = append(out, append(d, bson.E{Key: "consideredValue", Value: v}))
				continue
			}
			if r := schemaKeywordReasons[k]; r != "" {
				d = append(d, bson.E{Key: "reason", Value: r}, bson.E{Key: "consideredValue", Value: v})
				switch k {
				case "bsonType", "type":
					d = append(d, bson.E{Key: "consideredType", Value: values.TypeName(v.Type)})
				case "minItems", "maxItems":
					n, _ := v.Array().Values()
					d = append(d, bson.E{Key: "numberOfItems", Value: int32(len(n))})
				case "uniqueItems":
					dup, _ := query.FirstDuplicateItem(v.Value)
					d = append(d, bson.E{Key: "duplicatedValue", Value: dup})
				}
			}
			out = append(out, d)
		}
	}
	return out
}

// keywordFails reports whether v fails the one keyword k of schema (with
// its companions: exclusiveMinimum beside minimum, patternProperties and
// properties beside additionalProperties).
func keywordFails(schema bson.Raw, k string, spec, v bson.RawValue) bool {
	if restrictsAll(schema, k) && !ofRestrictedKind(k, v) {
		return true
	}
	sub := bson.D{{Key: k, Value: spec}}
	if k == "additionalItems" {
		// additionalItems counts from the end of an items array.
		if items, err := schema.LookupErr("items"); err == nil {
			sub = append(sub, bson.E{Key: "items", Value: items})
		}
	}
	for _, companion := range [...]string{"exclusiveMinimum", "exclusiveMaximum", "properties", "patternProperties"} {
		if companion == k || (k != "additionalProperties" && (companion == "properties" || companion == "patternProperties")) {
			continue
		}
		if cv, err := schema.LookupErr(companion); err == nil {
			sub = append(sub, bson.E{Key: companion, Value: cv})
		}
	}
	return !schemaMatches(sub, v)
}

// restrictedKind is the kind of value each keyword restricting one kind
// of value applies to: numbers or strings.
var restrictedKind = map[string]string{
	"minimum": "number", "maximum": "number", "multipleOf": "number",
	"minLength": "string", "maxLength": "string", "pattern": "string",
}

// keywordExpectedTypes are the types MongoDB names when such a keyword,
// applied to a value of another kind, fails it (doc_validation_error.cpp:
// generateStringLengthError, RegexMatchExpression's and
// InternalSchemaFmodMatchExpression's expected types; a comparison names
// none).
var keywordExpectedTypes = map[string][]string{
	"minLength": {"string"}, "maxLength": {"string"},
	"pattern": expectedTypes["$regex"], "multipleOf": expectedTypes["$mod"],
}

// restrictsAll reports whether keyword k of schema applies to values of
// every type: when the schema's type or bsonType names one type (number
// counting as one) of the kind k restricts, MongoDB's makeRestriction
// keeps k's expression as it is, failing values of other kinds, instead
// of letting them pass (json_schema_parser.cpp).
func restrictsAll(schema bson.Raw, k string) bool {
	kind := restrictedKind[k]
	if kind == "" {
		return false
	}
	for _, tk := range [...]string{"type", "bsonType"} {
		t, err := schema.LookupErr(tk)
		if err != nil {
			continue
		}
		name, ok := t.StringValueOK()
		if arr, isArr := t.ArrayOK(); isArr {
			if vals, _ := arr.Values(); len(vals) == 1 {
				name, ok = vals[0].StringValueOK()
			}
		}
		if !ok {
			return false
		}
		if kind == "string" {
			return name == "string"
		}
		return slices.Contains([]string{"number", "int", "long", "double", "decimal"}, name)
	}
	return false
}

// ofRestrictedKind reports whether v is of the kind keyword k restricts
// (a symbol, which a pattern tests too, counting as a string).
func ofRestrictedKind(k string, v bson.RawValue) bool {
	if restrictedKind[k] == "number" {
		return values.IsNumber(v.Type)
	}
	return v.Type == bson.TypeString || (k == "pattern" && v.Type == bson.TypeSymbol)
}

// schemaMatches applies a schema to v as the value of a property, through
// the query language's $jsonSchema.
func schemaMatches(schema any, v bson.RawValue) bool {
	filter, err := bson.Marshal(bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: bson.D{{Key: "v", Value: schema}}}}}})
	if err != nil {
		return false
	}
	f, err := query.Compile(filter)
	if err != nil {
		return false
	}
	doc, err := bson.Marshal(bson.D{{Key: "v", Value: v}})
	if err != nil {
		return false
	}
	return f.Match(doc)
}

// missingProperties lists the names of the array spec (required, or a
// property dependency) at which the document v has no value, in the
// array's order or, sorted, in byte order; a dotted name is a path
// (query.SchemaNameExists).
func missingProperties(spec, v bson.RawValue, sorted bool) bson.A {
	doc, _ := v.DocumentOK()
	names, _ := spec.Array().Values()
	var missing []string
	for _, n := range names {
		if !query.SchemaNameExists(doc, n.StringValue()) {
			missing = append(missing, n.StringValue())
		}
	}
	if sorted {
		slices.Sort(missing)
	}
	out := bson.A{}
	for _, n := range missing {
		out = append(out, n)
	}
	return out
}

// propertiesErrors lists the properties of v failing their subschemas:
// {propertyName, title and description when given, details}. A dotted
// name is a path; one that meets an array on the way, where it may hold
// several values, is not explained.
func propertiesErrors(spec, v bson.RawValue) bson.A {
	out := bson.A{}
	doc, _ := v.DocumentOK()
	props, _ := spec.Document().Elements()
	for _, p := range props {
		pv, single := query.SchemaNameValue(doc, p.Key())
		sub, _ := p.Value().DocumentOK()
		if !single || pv.Type == 0 || schemaMatches(sub, pv) {
			continue
		}
		out = append(out, propertyError(p.Key(), sub, pv))
	}
	return out
}

func propertyError(name string, sub bson.Raw, v bson.RawValue) bson.D {
	d := annotated(bson.D{{Key: "propertyName", Value: name}}, sub)
	return append(d, bson.E{Key: "details", Value: schemaErrors(sub, v)})
}

// additionalPropertiesError describes the fields of v that neither
// properties nor patternProperties name: for false, their names; for a
// subschema, the first that fails it.
func additionalPropertiesError(schema bson.Raw, spec, v bson.RawValue) bson.D {
	doc, _ := v.DocumentOK()
	props, _ := schema.Lookup("properties").DocumentOK()
	var patterns []*regex.Regexp
	if pp, ok := schema.Lookup("patternProperties").DocumentOK(); ok {
		elems, _ := pp.Elements()
		for _, e := range elems {
			if re, err := regex.Compile(e.Key(), ""); err == nil {
				patterns = append(patterns, re)
			}
		}
	}
	extra := bson.A{}
	var extraVals []bson.RawElement
	elems, _ := doc.Elements()
	for _, e := range elems {
		if _, err := props.LookupErr(e.Key()); err == nil {
			continue
		}
		matched := false
		for _, re := range patterns {
			matched = matched || re.Match([]byte(e.Key()))
		}
		if !matched {
			extra = append(extra, e.Key())
			extraVals = append(extraVals, e)
		}
	}
	out := bson.D{{Key: "operatorName", Value: "additionalProperties"}}
	sub, isSchema := spec.DocumentOK()
	if !isSchema {
		return append(out, bson.E{Key: "specifiedAs", Value: bson.D{{Key: "additionalProperties", Value: spec}}}, bson.E{Key: "additionalProperties", Value: extra})
	}
	for _, e := range extraVals {
		if !schemaMatches(sub, e.Value()) {
			return append(out, bson.E{Key: "reason", Value: "at least one additional property did not match the subschema"},
				bson.E{Key: "failingProperty", Value: e.Key()}, bson.E{Key: "details", Value: schemaErrors(sub, e.Value())})
		}
	}
	return out
}

// subschemaErrors lists, for allOf, anyOf and oneOf, the subschemas v
// fails: {index, details}.
func subschemaErrors(spec, v bson.RawValue) bson.A {
	out := bson.A{}
	subs, _ := spec.Array().Values()
	for i, s := range subs {
		sub, _ := s.DocumentOK()
		if !schemaMatches(sub, v) {
			out = append(out, bson.D{{Key: "index", Value: int32(i)}, {Key: "details", Value: schemaErrors(sub, v)}})
		}
	}
	return out
}

// annotated appends the title and description of the subschema sub to d,
// as MongoDB annotates the errors of a subschema.
func annotated(d bson.D, sub bson.Raw) bson.D {
	for _, a := range [...]string{"title", "description"} {
		if s, ok := sub.Lookup(a).StringValueOK(); ok {
			d = append(d, bson.E{Key: a, Value: s})
		}
	}
	return d
}

// itemsError explains items or additionalItems (k, specified as spec in
// schema) on the array v: with one subschema, its first failing item's
// index and details; items' array of subschemas, the failing positions;
// additionalItems false, the items past the items array.
func itemsError(schema bson.Raw, k string, spec, v bson.RawValue) bson.D {
	elems, _ := v.Array().Values()
	from := 0
	if k == "additionalItems" {
		if list, ok := schema.Lookup("items").ArrayOK(); ok {
			vals, _ := list.Values()
			from = min(len(vals), len(elems))
		}
	}
	out := bson.D{{Key: "operatorName", Value: k}}
	switch sub, isSchema := spec.DocumentOK(); {
	case isSchema:
		reason := "At least one item did not match the sub-schema"
		if k == "additionalItems" {
			reason = "At least one additional item did not match the sub-schema"
		}
		for i := from; i < len(elems); i++ {
			if !schemaMatches(sub, elems[i]) {
				return append(annotated(out, sub), bson.E{Key: "reason", Value: reason}, bson.E{Key: "itemIndex", Value: int32(i)},
					bson.E{Key: "details", Value: schemaErrors(sub, elems[i])})
			}
		}
		return out
	case k == "items":
		subs, _ := spec.Array().Values()
		failed := bson.A{}
		for i := 0; i < len(subs) && i < len(elems); i++ {
			if sub, _ := subs[i].DocumentOK(); !schemaMatches(sub, elems[i]) {
				failed = append(failed, bson.D{{Key: "itemIndex", Value: int32(i)}, {Key: "details", Value: schemaErrors(sub, elems[i])}})
			}
		}
		return append(out, bson.E{Key: "details", Value: failed})
	}
	extra := bson.A{}
	for _, e := range elems[from:] {
		extra = append(extra, e)
	}
	return append(out, bson.E{Key: "specifiedAs", Value: bson.D{{Key: k, Value: spec}}}, bson.E{Key: "reason", Value: "found additional items"}, bson.E{Key: "additionalItems", Value: extra})
}

// patternPropertiesErrors lists, for each pattern in order, the first
// property of v its name matches whose value fails its subschema:
// {propertyName, title and description, regexMatched, details}.
func patternPropertiesErrors(spec, v bson.RawValue) bson.A {
	out := bson.A{}
	doc, _ := v.DocumentOK()
	props, _ := doc.Elements()
	patterns, _ := spec.Document().Elements()
	for _, p := range patterns {
		re, err := regex.Compile(p.Key(), "")
		sub, _ := p.Value().DocumentOK()
		if err != nil {
			continue
		}
		for _, prop := range props {
			if re.Match([]byte(prop.Key())) && !schemaMatches(sub, prop.Value()) {
				d := annotated(bson.D{{Key: "propertyName", Value: prop.Key()}}, sub)
				out = append(out, append(d, bson.E{Key: "regexMatched", Value: p.Key()}, bson.E{Key: "details", Value: schemaErrors(sub, prop.Value())}))
				break
			}
		}
	}
	return out
}

// matchingSubschemas are the indexes of the subschemas of spec (oneOf)
// that v satisfies.
func matchingSubschemas(spec, v bson.RawValue) bson.A {
	out := bson.A{}
	subs, _ := spec.Array().Values()
	for i, s := range subs {
		if sub, _ := s.DocumentOK(); schemaMatches(sub, v) {
			out = append(out, int32(i))
		}
	}
	return out
}

// dependenciesErrors lists the dependencies v fails, for each property v
// has: the dependent properties it lacks, or the failing subschema's
// details.
func dependenciesErrors(spec, v bson.RawValue) bson.A {
	out := bson.A{}
	doc, _ := v.DocumentOK()
	deps, _ := spec.Document().Elements()
	for _, dep := range deps {
		if !query.SchemaNameExists(doc, dep.Key()) {
			continue
		}
		d := bson.D{{Key: "conditionalProperty", Value: dep.Key()}}
		if sub, ok := dep.Value().DocumentOK(); ok {
			if !schemaMatches(sub, v) {
				out = append(out, append(d, bson.E{Key: "details", Value: schemaErrors(sub, v)}))
			}
			continue
		}
		if missing := missingProperties(dep.Value(), v, false); len(missing) > 0 {
			out = append(out, append(d, bson.E{Key: "missingProperties", Value: missing}))
		}
	}
	return out
}
