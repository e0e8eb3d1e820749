package query

import (
	"bytes"
	"github.com/folio-db/folio/internal/regex"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// jsonSchema is a compiled $jsonSchema: MongoDB's subset of JSON Schema
// draft 4 plus bsonType, as a predicate over one value. The top-level schema
// is applied to the document itself, so keywords restricting other types
// (minimum, items, ...) have no effect there, and a type that excludes
// "object" matches nothing.
//
// Following JSON Schema, each restriction keyword constrains only values of
// its own type and lets every other value pass: minimum, maximum and
// multipleOf apply to numbers; minLength, maxLength and pattern to strings;
// minItems, maxItems, uniqueItems, items and additionalItems to arrays;
// required, properties, patternProperties, additionalProperties,
// minProperties, maxProperties and dependencies to embedded documents. Only
// type and bsonType reject values of other types. A value is never
// traversed as an array of candidates, unlike in the rest of the query
// language.
type jsonSchema struct {
	// reject is the boolean schema false (additionalItems or
	// additionalProperties: false): nothing matches.
	reject bool

	types    typeSet // bsonType or type
	hasTypes bool
	// singleType is the one type the schema states (a representative
	// int for "number"), or 0: MongoDB's makeRestriction then keeps a
	// restriction of that type's kind as it is and drops the others.
	singleType bson.Type

	minimum, maximum *schemaBound
	multipleOf       bool
	divisor          *big.Rat // nil when the divisor is NaN or infinite
	divisorIsInf     bool

	minLength, maxLength int64 // -1 when absent
	pattern              *regex.Regexp

	minItems, maxItems int64 // -1 when absent
	uniqueItems        bool
	items              *jsonSchema   // items as one schema for every element
	tuple              []*jsonSchema // items as an array: one schema per position
	additionalItems    *jsonSchema   // elements past the tuple; nil allows them

	required           []schemaName
	properties         []schemaProperty
	checkAllowed       bool // patternProperties or additionalProperties is present
	patterns           []schemaPattern
	additional         *jsonSchema // fields neither named nor matched by a pattern; nil allows them
	minProps, maxProps int64       // -1 when absent
	dependencies       []schemaDependency

	allOf, anyOf, oneOf []*jsonSchema
	not                 *jsonSchema
	enum                []bson.RawValue // with document fields sorted, see sortedFields
	hasEnum             bool

	// encrypt: the value must be encrypted, a BinData of subtype 6; with
	// encrypt's bsonType (hasEncryptedTypes), a deterministic or random
	// encryption of a value of one of encryptedTypes.
	encrypt           bool
	encryptedTypes    typeSet
	hasEncryptedTypes bool
	// usesEncryption: the schema has encrypt or encryptMetadata.
	usesEncryption bool
}

// schemaBound is minimum or maximum as the comparison it makes: $gte or $gt
// for minimum, $lte or $lt for maximum (exclusive).
type schemaBound struct {
	op    Kind
	value bson.RawValue
}

type schemaProperty struct {
	schemaName
	schema *jsonSchema
	// required: the name is also in required, so MongoDB's translation
	// applies schema even where the property is missing.
	required bool
}

// schemaName is a name in properties, required or dependencies. MongoDB
// reads it as a field path (FieldRef): a name with a dot names a field of
// an embedded document, reached through arrays as any query path is
// (json_schema_parser.cpp: the nested schema parsed at that path, and
// ExistsMatchExpression(name)). path is nil for a name without a dot,
// which is looked up as one field.
type schemaName struct {
	name string
	path fieldPath
}

func newSchemaName(name string) schemaName {
	n := schemaName{name: name}
	if strings.Contains(name, ".") {
		n.path = parsePath(name)
	}
	return n
}

// exists reports whether doc has a value at the name.
func (n schemaName) exists(doc []byte) bool {
	if n.path == nil {
		return rawdoc.Lookup(doc, n.name).Type != 0
	}
	return anyAt(doc, n.path, false, func(v bson.RawValue) bool { return v.Type != 0 })
}

type schemaPattern struct {
	re     *regex.Regexp
	schema *jsonSchema
}

// schemaDependency is one entry of dependencies: when the document has the
// field name, it must also have every field of props (the array form), or
// match schema (the schema form).
type schemaDependency struct {
	name   schemaName
	props  []schemaName
	schema *jsonSchema
}

// schemaKeywords are the keywords MongoDB accepts; unsupportedKeywords are
// JSON Schema keywords it refuses with a distinct message.
var (
	schemaKeywords = map[string]bool{
		"additionalItems": true, "additionalProperties": true, "allOf": true,
		"anyOf": true, "bsonType": true, "dependencies": true, "description": true,
		"encrypt": true, "encryptMetadata": true, "enum": true,
		"exclusiveMaximum": true, "exclusiveMinimum": true, "items": true,
		"maxItems": true, "maxLength": true, "maxProperties": true, "maximum": true,
		"minItems": true, "minLength": true, "minProperties": true, "minimum": true,
		"multipleOf": true, "not": true, "oneOf": true, "pattern": true,
		"patternProperties": true, "properties": true, "required": true,
		"title": true, "type": true, "uniqueItems": true,
	}
	unsupportedKeywords = map[string]bool{
		"$ref": true, "$schema": true, "default": true, "definitions": true,
		"format": true, "id": true,
	}
	// jsonTypes are the JSON Schema type names MongoDB maps to BSON types;
	// "number" (all numeric types) is handled apart, and "integer" is
	// refused.
	jsonTypes = map[string]bson.Type{
		"array": bson.TypeArray, "boolean": bson.TypeBoolean, "null": bson.TypeNull,
		"object": bson.TypeEmbeddedDocument, "string": bson.TypeString,
	}
)

// parseJSONSchemaOperator parses {$jsonSchema: schema}.
func parseJSONSchemaOperator(v bson.RawValue) (*Node, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema must be an object")
	}
	s, err := parseJSONSchema(v.Value)
	if err != nil {
		return nil, err
	}
	return &Node{Kind: KindJSONSchema, Value: v, schema: s}, nil
}

// parseJSONSchema compiles a schema document, checking keywords in the
// order MongoDB's JSONSchemaParser does so the first error reported is the
// same.
func parseJSONSchema(doc []byte) (*jsonSchema, error) {
	kw := map[string]bson.RawValue{}
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		name := string(k)
		switch {
		case unsupportedKeywords[name]:
			return nil, mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword '%s' is not currently supported", name)
		case !schemaKeywords[name]:
			return nil, mongoerr.New(mongoerr.FailedToParse, "Unknown $jsonSchema keyword: %s", name)
		}
		if _, dup := kw[name]; dup {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Duplicate $jsonSchema keyword: %s", name)
		}
		kw[name] = v
	}
	for _, name := range []string{"description", "title"} {
		if v, ok := kw[name]; ok && v.Type != bson.TypeString {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be of type string", name)
		}
	}
	s := &jsonSchema{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
	if err := s.parseType(kw); err != nil {
		return nil, err
	}
	for _, parse := range []func(map[string]bson.RawValue) error{
		s.parseScalarKeywords, s.parseArrayKeywords, s.parseEncryptKeywords,
		s.parseObjectKeywords, s.parseLogicalKeywords,
	} {
		if err := parse(kw); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseType parses type (JSON type names) or bsonType ($type aliases); a
// schema may not have both.
func (s *jsonSchema) parseType(kw map[string]bson.RawValue) error {
	typ, hasType := kw["type"]
	bsonType, hasBSONType := kw["bsonType"]
	_, hasEncrypt := kw["encrypt"]
	name := "type"
	switch {
	case hasType && hasBSONType:
		return mongoerr.New(mongoerr.FailedToParse, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'")
	case hasEncrypt && (hasType || hasBSONType):
		if hasBSONType {
			name = "bsonType"
		}
		return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword 'encrypt' cannot be used in conjunction with '%s', 'encrypt' implies type 'bsonType::BinData'", name)
	case hasEncrypt:
		// encrypt implies the type BinData
		s.types.add(bson.TypeBinary)
		s.hasTypes, s.singleType = true, bson.TypeBinary
		return nil
	case hasBSONType:
		typ, name = bsonType, "bsonType"
	case !hasType:
		return nil
	}
	types, single, err := parseSchemaTypes(typ, name)
	if err != nil {
		return err
	}
	if types.empty() {
		return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword '%s' must name at least one type", name)
	}
	s.types, s.hasTypes, s.singleType = types, true, single
	return nil
}

// parseSchemaTypes parses the types of type (JSON type names) or bsonType
// ($type aliases), named name: a name or an array of distinct names
// (JSONSchemaParser::parseTypeSet). single is the type when exactly one
// alias is named (int for "number", which stands for all numbers), as
// MatcherTypeSet::isSingleType counts them.
func parseSchemaTypes(typ bson.RawValue, name string) (types typeSet, single bson.Type, err error) {
	var aliases []string
	seen := map[string]bool{}
	add := func(a string) error {
		if a == "integer" {
			return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema type 'integer' is not currently supported.")
		}
		if seen[a] {
			return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword '%s' has duplicate value: %s", name, a)
		}
		seen[a] = true
		aliases = append(aliases, a)
		return nil
	}
	switch typ.Type {
	case bson.TypeString:
		if err := add(typ.StringValue()); err != nil {
			return types, 0, err
		}
	case bson.TypeArray:
		it := rawdoc.Iterate(typ.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			a, isString := e.StringValueOK()
			if !isString {
				return types, 0, mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' array elements must be strings", name)
			}
			if err := add(a); err != nil {
				return types, 0, err
			}
		}
	default:
		return types, 0, mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be either a string or an array of strings", name)
	}
	for _, a := range aliases {
		if a == "number" {
			for _, t := range []bson.Type{bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128} {
				types.add(t)
			}
			single = bson.TypeInt32
			continue
		}
		t, ok := jsonTypes[a]
		if name == "bsonType" {
			t, ok = values.TypeByName(a)
		}
		if !ok {
			return types, 0, mongoerr.New(mongoerr.BadValue, "Unknown type name alias: %s", a)
		}
		types.add(t)
		single = t
	}
	if len(aliases) != 1 {
		single = 0
	}
	return types, single, nil
}

// parseScalarKeywords parses pattern, maxLength, minLength, multipleOf,
// maximum/exclusiveMaximum and minimum/exclusiveMinimum.
func (s *jsonSchema) parseScalarKeywords(kw map[string]bson.RawValue) error {
	if v, ok := kw["pattern"]; ok {
		if v.Type != bson.TypeString {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'pattern' must be a string")
		}
		re, err := compileRegex(v.StringValue(), "")
		if err != nil {
			return err
		}
		s.pattern = re
	}
	for _, l := range []struct {
		name string
		dst  *int64
	}{{"maxLength", &s.maxLength}, {"minLength", &s.minLength}} {
		if err := parseSchemaCount(kw, l.name, l.dst); err != nil {
			return err
		}
	}
	if v, ok := kw["multipleOf"]; ok {
		if !values.IsNumber(v.Type) {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'multipleOf' must be a number")
		}
		f, _ := values.Float64(v)
		if values.IsZero(v) || f < 0 {
			return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword 'multipleOf' must have a positive value")
		}
		s.multipleOf = true
		s.divisor, _ = decimalRat(v)
		s.divisorIsInf = math.IsInf(f, 1)
	}
	var err error
	if s.maximum, err = parseSchemaBound(kw, "maximum", "exclusiveMaximum", KindLte, KindLt); err != nil {
		return err
	}
	s.minimum, err = parseSchemaBound(kw, "minimum", "exclusiveMinimum", KindGte, KindGt)
	return err
}

// parseSchemaBound parses maximum or minimum with its exclusive flag, which
// may not appear alone; op and exclusiveOp are the comparisons it makes.
func parseSchemaBound(kw map[string]bson.RawValue, name, exclusiveName string, op, exclusiveOp Kind) (*schemaBound, error) {
	v, ok := kw[name]
	ex, hasEx := kw[exclusiveName]
	if !ok {
		if hasEx {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword '%s' must be a present if %s is present", name, exclusiveName)
		}
		return nil, nil
	}
	b := &schemaBound{op: op, value: v}
	if hasEx {
		if ex.Type != bson.TypeBoolean {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be a boolean", exclusiveName)
		}
		if ex.Boolean() {
			b.op = exclusiveOp
		}
	}
	if !values.IsNumber(v.Type) {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be a number", name)
	}
	return b, nil
}

// parseSchemaCount parses a keyword taking a count (minLength, maxItems,
// ...): a number holding a non-negative 64-bit integer
// (MatchExpressionParser::parseIntegerElementToNonNegativeLong).
func parseSchemaCount(kw map[string]bson.RawValue, name string, dst *int64) error {
	v, ok := kw[name]
	if !ok {
		return nil
	}
	n, reason := values.IntegerReason(v)
	if reason == "" && n < 0 {
		reason = "Expected a positive number in"
	}
	if reason != "" {
		return mongoerr.New(mongoerr.FailedToParse, "%s: %s: %s", reason, name, values.Shell(v))
	}
	*dst = n
	return nil
}

// parseArrayKeywords parses minItems, maxItems, uniqueItems, items and
// additionalItems (which has effect only when items is an array).
func (s *jsonSchema) parseArrayKeywords(kw map[string]bson.RawValue) error {
	if err := parseSchemaCount(kw, "minItems", &s.minItems); err != nil {
		return err
	}
	if err := parseSchemaCount(kw, "maxItems", &s.maxItems); err != nil {
		return err
	}
	if v, ok := kw["uniqueItems"]; ok {
		if v.Type != bson.TypeBoolean {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'uniqueItems' must be a boolean")
		}
		s.uniqueItems = v.Boolean()
	}
	isTuple := false
	if v, ok := kw["items"]; ok {
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			sub, err := parseJSONSchema(v.Value)
			if err != nil {
				return err
			}
			s.items = sub
		case bson.TypeArray:
			isTuple = true
			it := rawdoc.Iterate(v.Value)
			for {
				_, e, ok := it.Next()
				if !ok {
					break
				}
				if e.Type != bson.TypeEmbeddedDocument {
					return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'items' requires that each element of the array is an object, but found a %s", values.TypeName(e.Type))
				}
				sub, err := parseJSONSchema(e.Value)
				if err != nil {
					return err
				}
				s.tuple = append(s.tuple, sub)
			}
		default:
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'items' must be an array or an object, not %s", values.TypeName(v.Type))
		}
	}
	if v, ok := kw["additionalItems"]; ok {
		if v.Type != bson.TypeBoolean && v.Type != bson.TypeEmbeddedDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'additionalItems' must be either an object or a boolean, but got a %s", values.TypeName(v.Type))
		}
		sub, err := parseBoolOrSchema(v)
		if err != nil {
			return err
		}
		if isTuple {
			s.additionalItems = sub
		}
	}
	return nil
}

// parseBoolOrSchema parses additionalItems or additionalProperties: true
// (nil, no constraint), false (a schema matching nothing) or a schema.
func parseBoolOrSchema(v bson.RawValue) (*jsonSchema, error) {
	if v.Type == bson.TypeBoolean {
		if v.Boolean() {
			return nil, nil
		}
		return &jsonSchema{reject: true}, nil
	}
	return parseJSONSchema(v.Value)
}

// parseEncryptKeywords parses encrypt and encryptMetadata, which may not
// appear together: objects of the fields MongoDB's EncryptionInfo and
// EncryptionMetadata (IDL, strict) hold; encryptMetadata has no effect on
// matching, and may not be empty (translateEncryptionKeywords).
func (s *jsonSchema) parseEncryptKeywords(kw map[string]bson.RawValue) error {
	enc, hasEnc := kw["encrypt"]
	meta, hasMeta := kw["encryptMetadata"]
	if hasEnc && hasMeta {
		return mongoerr.New(mongoerr.FailedToParse, "Cannot specify both $jsonSchema keywords 'encrypt' and 'encryptMetadata'")
	}
	s.usesEncryption = hasEnc || hasMeta
	if hasMeta {
		if meta.Type != bson.TypeEmbeddedDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'encryptMetadata' must be an object ")
		}
		if len(meta.Value) <= 5 {
			return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword 'encryptMetadata' cannot be an empty object ")
		}
		_, _, err := parseEncryptionInfo(meta.Value, "encryptMetadata")
		return err
	}
	if !hasEnc {
		return nil
	}
	if enc.Type != bson.TypeEmbeddedDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'encrypt' must be an object ")
	}
	var err error
	s.encrypt = true
	s.encryptedTypes, s.hasEncryptedTypes, err = parseEncryptionInfo(enc.Value, "encrypt")
	return err
}

// fleAlgorithms are the encryption algorithms of encrypt and
// encryptMetadata (the IDL enum FleAlgorithm).
var fleAlgorithms = []string{"AEAD_AES_256_CBC_HMAC_SHA_512-Deterministic", "AEAD_AES_256_CBC_HMAC_SHA_512-Random"}

// parseEncryptionInfo checks the fields of encrypt or encryptMetadata
// (name) as the IDL parses them: algorithm, initializationVector (BinData
// of subtype 0), keyId (a string, or an array of UUIDs) and, for encrypt,
// bsonType (type aliases, as the keyword's); it returns encrypt's types.
func parseEncryptionInfo(doc []byte, name string) (types typeSet, hasTypes bool, err error) {
	seen := map[string]bool{}
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return types, hasTypes, nil
		}
		f := string(k)
		path := name + "." + f
		if seen[f] {
			return types, false, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '%s' is a duplicate field", path)
		}
		seen[f] = true
		known := f == "algorithm" || f == "initializationVector" || f == "keyId" || (f == "bsonType" && name == "encrypt")
		if known && (v.Type == bson.TypeNull || v.Type == bson.TypeUndefined) {
			// the IDL reads a null field as absent
			continue
		}
		switch {
		case f == "bsonType" && name == "encrypt":
			if types, _, err = parseSchemaTypes(v, "bsonType"); err != nil {
				return types, false, err
			}
			hasTypes = true
		case f == "algorithm":
			if v.Type != bson.TypeString {
				return types, false, mongoerr.WrongType(path, values.TypeName(v.Type), "string")
			}
			if !slices.Contains(fleAlgorithms, v.StringValue()) {
				return types, false, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '%s' is not a valid value.", v.StringValue(), path)
			}
		case f == "initializationVector":
			if v.Type != bson.TypeBinary {
				return types, false, mongoerr.WrongType(path, values.TypeName(v.Type), "binData")
			}
			if sub, _ := v.Binary(); sub != 0 {
				return types, false, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong bindData type '%s', expected type 'general'", path, binDataTypeName(sub))
			}
		case f == "keyId":
			if err := parseEncryptKeyID(v); err != nil {
				return types, false, err
			}
		default:
			return types, false, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s' is an unknown field.", path)
		}
	}
}

// binDataTypeName is MongoDB's typeName of a BinData subtype.
func binDataTypeName(sub byte) string {
	names := []string{"general", "function", "byte(deprecated)", "uuid(deprecated)", "uuid", "md5", "encrypt", "column", "sensitive"}
	switch {
	case int(sub) < len(names):
		return names[sub]
	case sub == 0x80:
		return "Custom"
	}
	return "invalid"
}

// parseEncryptKeyID checks keyId: a string (a JSON pointer to the key), or
// an array of UUIDs (EncryptSchemaKeyId::parseFromBSON).
func parseEncryptKeyID(v bson.RawValue) error {
	switch v.Type {
	case bson.TypeString:
		return nil
	case bson.TypeArray:
		it := rawdoc.Iterate(v.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				return nil
			}
			sub, data, isBin := e.BinaryOK()
			if !isBin || sub != bson.TypeBinaryUUID {
				return mongoerr.New(mongoerr.EncryptKeyIDNotUUID, "Array elements must have type UUID, found %d", sub)
			}
			if len(data) != 16 {
				return mongoerr.New(mongoerr.InvalidUUID, "uuid must be a 16-byte binary field with UUID (4) subtype")
			}
		}
	}
	return mongoerr.New(mongoerr.EncryptKeyIDType, "Expected either string or array of UUID for EncryptSchemaKeyId, found %s", values.TypeName(v.Type))
}

// parseObjectKeywords parses required, properties, patternProperties,
// additionalProperties, minProperties, maxProperties and dependencies.
func (s *jsonSchema) parseObjectKeywords(kw map[string]bson.RawValue) error {
	if v, ok := kw["required"]; ok {
		if v.Type != bson.TypeArray {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'required' must be an array, but found an element of type %s", values.TypeName(v.Type))
		}
		names, err := parseNameList(v, func(e bson.RawValue) error {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'required' must be an array of strings, but found an element of type: %s", values.TypeName(e.Type))
		})
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword 'required' cannot be an empty array")
		}
		if _, dup := duplicate(names); dup {
			return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword 'required' array cannot contain duplicate values")
		}
		for _, n := range names {
			s.required = append(s.required, newSchemaName(n))
		}
	}
	if v, ok := kw["properties"]; ok {
		if v.Type != bson.TypeEmbeddedDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'properties' must be an object")
		}
		it := rawdoc.Iterate(v.Value)
		for {
			k, e, ok := it.Next()
			if !ok {
				break
			}
			if e.Type != bson.TypeEmbeddedDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "Nested schema for $jsonSchema property '%s' must be an object", k)
			}
			sub, err := parseJSONSchema(e.Value)
			if err != nil {
				return err
			}
			name := string(k)
			required := slices.ContainsFunc(s.required, func(r schemaName) bool { return r.name == name })
			s.properties = append(s.properties, schemaProperty{schemaName: newSchemaName(name), schema: sub, required: required})
		}
	}
	if v, ok := kw["patternProperties"]; ok {
		s.checkAllowed = true
		if v.Type != bson.TypeEmbeddedDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'patternProperties' must be an object")
		}
		it := rawdoc.Iterate(v.Value)
		for {
			k, e, ok := it.Next()
			if !ok {
				break
			}
			if e.Type != bson.TypeEmbeddedDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'patternProperties' has property '%s' which is not an object", k)
			}
			sub, err := parseJSONSchema(e.Value)
			if err != nil {
				return err
			}
			re, err := compileRegex(string(k), "")
			if err != nil {
				return err
			}
			s.patterns = append(s.patterns, schemaPattern{re: re, schema: sub})
		}
	}
	if v, ok := kw["additionalProperties"]; ok {
		s.checkAllowed = true
		if v.Type != bson.TypeBoolean && v.Type != bson.TypeEmbeddedDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'additionalProperties' must be an object or a boolean")
		}
		var err error
		if s.additional, err = parseBoolOrSchema(v); err != nil {
			return err
		}
	}
	if err := parseSchemaCount(kw, "minProperties", &s.minProps); err != nil {
		return err
	}
	if err := parseSchemaCount(kw, "maxProperties", &s.maxProps); err != nil {
		return err
	}
	if v, ok := kw["dependencies"]; ok {
		return s.parseDependencies(v)
	}
	return nil
}

// parseDependencies parses dependencies: an object mapping each field name
// to a schema or to a non-empty array of distinct field names.
func (s *jsonSchema) parseDependencies(v bson.RawValue) error {
	if v.Type != bson.TypeEmbeddedDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'dependencies' must be an object")
	}
	it := rawdoc.Iterate(v.Value)
	for {
		k, e, ok := it.Next()
		if !ok {
			return nil
		}
		d := schemaDependency{name: newSchemaName(string(k))}
		switch e.Type {
		case bson.TypeEmbeddedDocument:
			sub, err := parseJSONSchema(e.Value)
			if err != nil {
				return err
			}
			d.schema = sub
		case bson.TypeArray:
			names, err := parseNameList(e, func(x bson.RawValue) error {
				return mongoerr.New(mongoerr.TypeMismatch, "array '%s' in $jsonSchema keyword 'dependencies' can only contain strings, but found element of type: %s", k, values.TypeName(x.Type))
			})
			if err != nil {
				return err
			}
			if len(names) == 0 {
				return mongoerr.New(mongoerr.FailedToParse, "property '%s' in $jsonSchema keyword 'dependencies' cannot be an empty array", k)
			}
			if name, dup := duplicate(names); dup {
				return mongoerr.New(mongoerr.FailedToParse, "array '%s' in $jsonSchema keyword 'dependencies' contains duplicate element: %s", k, name)
			}
			for _, n := range names {
				d.props = append(d.props, newSchemaName(n))
			}
		default:
			return mongoerr.New(mongoerr.TypeMismatch, "property '%s' in $jsonSchema keyword 'dependencies' must be either an object or an array", k)
		}
		s.dependencies = append(s.dependencies, d)
	}
}

// parseNameList reads an array of strings; notString builds the error for
// another element.
func parseNameList(v bson.RawValue, notString func(bson.RawValue) error) ([]string, error) {
	var names []string
	it := rawdoc.Iterate(v.Value)
	for {
		_, e, ok := it.Next()
		if !ok {
			return names, nil
		}
		name, isString := e.StringValueOK()
		if !isString {
			return nil, notString(e)
		}
		names = append(names, name)
	}
}

// duplicate returns the first name listed twice.
func duplicate(names []string) (string, bool) {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return n, true
		}
		seen[n] = true
	}
	return "", false
}

// parseLogicalKeywords parses allOf, anyOf, oneOf, not and enum.
func (s *jsonSchema) parseLogicalKeywords(kw map[string]bson.RawValue) error {
	for _, l := range []struct {
		name string
		dst  *[]*jsonSchema
	}{{"allOf", &s.allOf}, {"anyOf", &s.anyOf}, {"oneOf", &s.oneOf}} {
		v, ok := kw[l.name]
		if !ok {
			continue
		}
		if v.Type != bson.TypeArray {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be an array", l.name)
		}
		it := rawdoc.Iterate(v.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			if e.Type != bson.TypeEmbeddedDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be an array of objects, but found an element of type %s", l.name, values.TypeName(e.Type))
			}
			sub, err := parseJSONSchema(e.Value)
			if err != nil {
				return err
			}
			*l.dst = append(*l.dst, sub)
		}
		if len(*l.dst) == 0 {
			return mongoerr.New(mongoerr.BadValue, "$jsonSchema keyword '%s' must be a non-empty array", l.name)
		}
	}
	if v, ok := kw["not"]; ok {
		if v.Type != bson.TypeEmbeddedDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'not' must be an object, but found an element of type %s", values.TypeName(v.Type))
		}
		sub, err := parseJSONSchema(v.Value)
		if err != nil {
			return err
		}
		s.not = sub
	}
	if v, ok := kw["enum"]; ok {
		if v.Type != bson.TypeArray {
			return mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema keyword 'enum' must be an array, but found an element of type %s", values.TypeName(v.Type))
		}
		it := rawdoc.Iterate(v.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			s.enum = append(s.enum, sortedFields(e))
		}
		if len(s.enum) == 0 {
			return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword 'enum' cannot be an empty array")
		}
		if _, dup := FirstDuplicateItem(v.Value); dup {
			return mongoerr.New(mongoerr.FailedToParse, "$jsonSchema keyword 'enum' array cannot contain duplicate values.")
		}
		s.hasEnum = true
	}
	return nil
}

// matches reports whether v (zero for a missing value) satisfies the schema.
func (s *jsonSchema) matches(v bson.RawValue) bool {
	if s.reject || (s.hasTypes && !s.types.has(v.Type)) {
		return false
	}
	var ok bool
	switch {
	case values.IsNumber(v.Type):
		ok = s.numberMatches(v)
	case v.Type == bson.TypeString:
		ok = s.stringMatches(v)
	case v.Type == bson.TypeArray:
		ok = s.arrayMatches(v.Value)
	case v.Type == bson.TypeEmbeddedDocument:
		ok = s.objectMatches(v.Value)
	case v.Type == bson.TypeBinary:
		ok = !s.encrypt || s.encryptedMatches(v)
	default:
		ok = true
	}
	return ok && s.logicalMatches(v)
}

// encryptedMatches applies encrypt to the BinData v: of subtype 6, and
// with encrypt's bsonType a deterministic (1) or random (2) encryption
// whose header (the subtype byte, the key's 16-byte UUID, the original
// type) names one of its types
// (InternalSchemaBinDataEncryptedTypeExpression, FleBlobHeader).
func (s *jsonSchema) encryptedMatches(v bson.RawValue) bool {
	sub, data, _ := v.BinaryOK()
	if sub != bson.TypeBinaryEncrypted {
		return false
	}
	if !s.hasEncryptedTypes {
		return true
	}
	return len(data) >= 18 && (data[0] == 1 || data[0] == 2) && s.encryptedTypes.has(bson.Type(data[17]))
}

// UsesEncryption reports whether the schema, or one nested in it, has
// encrypt or encryptMetadata.
func (s *jsonSchema) UsesEncryption() bool {
	if s == nil {
		return false
	}
	if s.usesEncryption || s.items.UsesEncryption() || s.additionalItems.UsesEncryption() || s.additional.UsesEncryption() || s.not.UsesEncryption() {
		return true
	}
	subs := append(append(append(slices.Clone(s.tuple), s.allOf...), s.anyOf...), s.oneOf...)
	for _, p := range s.properties {
		subs = append(subs, p.schema)
	}
	for _, p := range s.patterns {
		subs = append(subs, p.schema)
	}
	for _, d := range s.dependencies {
		subs = append(subs, d.schema)
	}
	return slices.ContainsFunc(subs, (*jsonSchema).UsesEncryption)
}

// numberMatches applies minimum, maximum and multipleOf, comparing as the
// query operators do (NaN is neither above nor below any bound).
func (s *jsonSchema) numberMatches(v bson.RawValue) bool {
	for _, b := range []*schemaBound{s.minimum, s.maximum} {
		if b != nil && !compareMatches(b.op, v, b.value) {
			return false
		}
	}
	return !s.multipleOf || s.isMultiple(v)
}

// isMultiple applies multipleOf to the number v.
func (s *jsonSchema) isMultiple(v bson.RawValue) bool {
	x, finite := decimalRat(v)
	switch {
	case !finite:
		return false
	case s.divisor == nil: // fmod by NaN is NaN; by infinity it is x itself
		return s.divisorIsInf && x.Sign() == 0
	}
	return new(big.Rat).Quo(x, s.divisor).IsInt()
}

// decimalRat is the exact value of a finite number as MongoDB's multipleOf
// sees it: converted to Decimal128, which rounds a double to 15 significant
// digits (so 0.3 is a multiple of 0.1). ok is false for NaN and infinities.
func decimalRat(v bson.RawValue) (r *big.Rat, ok bool) {
	var text string
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := values.Int64(v)
		return new(big.Rat).SetInt64(n), true
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		text = strconv.FormatFloat(f, 'e', 14, 64)
	case bson.TypeDecimal128:
		d := v.Decimal128()
		if d.IsNaN() || d.IsInf() != 0 {
			return nil, false
		}
		text = d.String()
	default:
		return nil, false
	}
	return new(big.Rat).SetString(text)
}

// stringMatches applies minLength and maxLength, counted in code points,
// and pattern, which may match anywhere in the string.
func (s *jsonSchema) stringMatches(v bson.RawValue) bool {
	str := v.StringValue()
	if s.minLength >= 0 || s.maxLength >= 0 {
		n := int64(utf8.RuneCountInString(str))
		if n < s.minLength || (s.maxLength >= 0 && n > s.maxLength) {
			return false
		}
	}
	return s.pattern == nil || s.pattern.Match(v.Value[4:len(v.Value)-1])
}

// arrayMatches applies minItems, maxItems, uniqueItems (equality ignores
// the order of fields in embedded documents), items and additionalItems.
func (s *jsonSchema) arrayMatches(arr []byte) bool {
	if s.minItems >= 0 || s.maxItems >= 0 {
		n := int64(rawdoc.Len(arr))
		if n < s.minItems || (s.maxItems >= 0 && n > s.maxItems) {
			return false
		}
	}
	if s.uniqueItems && !distinctElements(arr) {
		return false
	}
	if s.items == nil && s.tuple == nil {
		return true
	}
	it := rawdoc.Iterate(arr)
	for i := 0; ; i++ {
		_, e, ok := it.Next()
		if !ok {
			return true
		}
		sub := s.items
		switch {
		case i < len(s.tuple):
			sub = s.tuple[i]
		case s.tuple != nil:
			sub = s.additionalItems
		}
		if sub != nil && !sub.matches(e) {
			return false
		}
	}
}

// itemsMatch reports whether every element of arr from index from on
// matches sub ($_internalSchemaAllElemMatchFromIndex).
func itemsMatch(arr []byte, from int, sub *jsonSchema) bool {
	it := rawdoc.Iterate(arr)
	for i := 0; ; i++ {
		_, e, ok := it.Next()
		if !ok {
			return true
		}
		if i >= from && !sub.matches(e) {
			return false
		}
	}
}

// itemMatches reports whether the element of arr at index i, if there is
// one, matches sub ($_internalSchemaMatchArrayIndex).
func itemMatches(arr []byte, i int, sub *jsonSchema) bool {
	it := rawdoc.Iterate(arr)
	for j := 0; ; j++ {
		_, e, ok := it.Next()
		if !ok {
			return true
		}
		if j == i {
			return sub.matches(e)
		}
	}
}

// distinctElements reports whether no two elements of arr are equal.
func distinctElements(arr []byte) bool {
	_, dup := FirstDuplicateItem(arr)
	return !dup
}

// FirstDuplicateItem is the first element of the array arr equal to an
// earlier one, as uniqueItems compares them (the order of fields in
// embedded documents ignored), as it appears in arr: what MongoDB's
// uniqueItems reports as the duplicatedValue of a failed validation.
func FirstDuplicateItem(arr []byte) (bson.RawValue, bool) {
	type item struct {
		key, elem bson.RawValue
		i         int
	}
	var items []item
	it := rawdoc.Iterate(arr)
	for i := 0; ; i++ {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		items = append(items, item{sortedFields(e), e, i})
	}
	// Equal items sort together in array order; the second of each run is
	// a duplicate, and the first in the array of those is the answer.
	slices.SortStableFunc(items, func(a, b item) int { return values.Compare(a.key, b.key) })
	best := -1
	for j := 1; j < len(items); j++ {
		if values.Compare(items[j-1].key, items[j].key) == 0 && (j < 2 || values.Compare(items[j-2].key, items[j].key) != 0) {
			if best < 0 || items[j].i < items[best].i {
				best = j
			}
		}
	}
	if best < 0 {
		return bson.RawValue{}, false
	}
	return items[best].elem, true
}

// objectMatches applies the object keywords to the embedded document doc.
func (s *jsonSchema) objectMatches(doc []byte) bool {
	return s.propertiesMatch(doc) && (!s.checkAllowed || s.allowedMatch(doc)) && s.requiredMatch(doc) &&
		s.propertyCountMatches(doc) && s.dependenciesMatch(doc)
}

// propertiesMatch applies properties: a property present in doc (one
// named in required, present or not) must match its schema.
func (s *jsonSchema) propertiesMatch(doc []byte) bool {
	for _, p := range s.properties {
		if p.path != nil {
			if (p.required || p.exists(doc)) && !p.schema.matchesAt(doc, p.path) {
				return false
			}
			continue
		}
		if v := rawdoc.Lookup(doc, p.name); (v.Type != 0 || p.required) && !p.schema.matches(v) {
			return false
		}
	}
	return true
}

// allowedMatch applies patternProperties and additionalProperties, which
// test each field of doc by its name, literally: every field whose name a
// patternProperties regex matches (anywhere in the name) must match that
// pattern's schema; a field neither named in properties nor matched by a
// pattern must match additionalProperties
// (InternalSchemaAllowedPropertiesMatchExpression).
func (s *jsonSchema) allowedMatch(doc []byte) bool {
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return true
		}
		if !s.fieldAllowed(k, v) {
			return false
		}
	}
}

func (s *jsonSchema) requiredMatch(doc []byte) bool {
	for _, n := range s.required {
		if !n.exists(doc) {
			return false
		}
	}
	return true
}

// propertyCountMatches applies minProperties and maxProperties.
func (s *jsonSchema) propertyCountMatches(doc []byte) bool {
	if s.minProps < 0 && s.maxProps < 0 {
		return true
	}
	n := int64(rawdoc.Len(doc))
	return n >= s.minProps && (s.maxProps < 0 || n <= s.maxProps)
}

// dependenciesMatch applies dependencies: when doc has a dependency's
// name, it must have each of its properties, or match its schema.
func (s *jsonSchema) dependenciesMatch(doc []byte) bool {
	for _, d := range s.dependencies {
		if !d.name.exists(doc) {
			continue
		}
		for _, n := range d.props {
			if !n.exists(doc) {
				return false
			}
		}
		if d.schema != nil && !d.schema.matches(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}) {
			return false
		}
	}
	return true
}

func (s *jsonSchema) fieldAllowed(name []byte, v bson.RawValue) bool {
	matched := false
	for _, p := range s.patterns {
		if p.re.Match(name) {
			matched = true
			if !p.schema.matches(v) {
				return false
			}
		}
	}
	if matched || s.additional == nil {
		return true
	}
	for _, p := range s.properties {
		if p.name == string(name) {
			return true
		}
	}
	return s.additional.matches(v)
}

// logicalMatches applies allOf, anyOf, oneOf (exactly one subschema
// matches), not and enum (equality ignores the order of fields in embedded
// documents; a missing value equals nothing).
func (s *jsonSchema) logicalMatches(v bson.RawValue) bool {
	for _, sub := range s.allOf {
		if !sub.matches(v) {
			return false
		}
	}
	if len(s.anyOf) > 0 {
		any := false
		for _, sub := range s.anyOf {
			if sub.matches(v) {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	if len(s.oneOf) > 0 {
		n := 0
		for _, sub := range s.oneOf {
			if sub.matches(v) {
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	if s.not != nil && s.not.matches(v) {
		return false
	}
	if !s.hasEnum {
		return true
	}
	return v.Type != 0 && s.enumHas(v)
}

// enumHas reports whether v equals a value of enum, the order of fields in
// embedded documents ignored.
func (s *jsonSchema) enumHas(v bson.RawValue) bool {
	v = sortedFields(v)
	for _, e := range s.enum {
		if values.Compare(v, e) == 0 {
			return true
		}
	}
	return false
}

// sortedFields returns v with the fields of every embedded document in it
// sorted by name, so that values.Compare treats documents holding the same
// fields in different orders as equal, as MongoDB's
// UnorderedFieldsBSONElementComparator does for enum and uniqueItems.
func sortedFields(v bson.RawValue) bson.RawValue {
	if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
		return v
	}
	type field struct {
		key []byte
		val bson.RawValue
	}
	var fields []field
	it := rawdoc.Iterate(v.Value)
	for {
		k, e, ok := it.Next()
		if !ok {
			break
		}
		fields = append(fields, field{k, sortedFields(e)})
	}
	if v.Type == bson.TypeEmbeddedDocument {
		slices.SortStableFunc(fields, func(a, b field) int { return bytes.Compare(a.key, b.key) })
	}
	start, out := bsoncore.AppendDocumentStart(nil)
	for _, f := range fields {
		out = rawdoc.AppendElement(out, string(f.key), f.val)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return bson.RawValue{Type: v.Type, Value: out}
}

// Kinds of values MongoDB's restriction keywords apply to.
var (
	schemaNumbers = typeSetOf(bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128)
	schemaStrings = typeSetOf(bson.TypeString)
	schemaArrays  = typeSetOf(bson.TypeArray)
	schemaObjects = typeSetOf(bson.TypeEmbeddedDocument)
)

func typeSetOf(types ...bson.Type) typeSet {
	var s typeSet
	for _, t := range types {
		s.add(t)
	}
	return s
}

// predicate adapts a test of one value to the walker's visitor.
type predicate func(bson.RawValue) bool

func (f predicate) visit(v bson.RawValue, _ int) (bool, int) { return f(v), -1 }

// anyAt reports whether some value at path p in doc satisfies pred, the
// values being those MongoDB's path iteration yields: arrays met before
// the last component are traversed; an array at the end is expanded into
// its elements (and itself) when expand is set (comparisons, regexes,
// $_internalSchemaFmod and the string lengths), else taken whole
// (LeafArrayBehavior::kNoTraversal: types, enum, the array and object
// keywords). A path that leads nowhere yields the missing value.
func anyAt(doc []byte, p fieldPath, expand bool, pred predicate) bool {
	w := walker{path: p, mode: leafWhole, vis: pred}
	if expand {
		w.mode = leafExpand
	}
	found, _ := w.walkDoc(doc, 0, -1)
	return found
}

// matchesAt applies the schema to the values at the dotted path p of doc
// as MongoDB's translation of a schema nested at a path does
// (json_schema_parser.cpp _parse): each keyword becomes its own match
// expression on p, so across the arrays p passes through each keyword is
// satisfied by some value of its own, not all by one value. A keyword
// restricting one kind of value (numbers, strings, arrays, objects)
// holds when no value at p is of that kind or the keyword's expression
// holds (makeRestriction), except that a schema stating one type keeps
// only the restrictions of that type's kind, unconditioned. For a path of
// one field, which holds one value, this is what matches computes.
func (s *jsonSchema) matchesAt(doc []byte, p fieldPath) bool {
	at := func(expand bool, pred predicate) bool { return anyAt(doc, p, expand, pred) }
	restrict := func(kind typeSet, expr func() bool) bool {
		if s.singleType != 0 {
			return !kind.has(s.singleType) || expr()
		}
		return !at(false, func(v bson.RawValue) bool { return kind.has(v.Type) }) || expr()
	}
	// leaf is a restriction whose expression is one test of the values.
	leaf := func(kind typeSet, expand bool, pred predicate) bool {
		return restrict(kind, func() bool { return at(expand, pred) })
	}
	if s.reject || (s.hasTypes && !at(false, func(v bson.RawValue) bool { return s.types.has(v.Type) })) {
		return false
	}
	if s.pattern != nil && !leaf(schemaStrings, true, func(v bson.RawValue) bool {
		return v.Type == bson.TypeString && s.pattern.Match(v.Value[4:len(v.Value)-1])
	}) {
		return false
	}
	if s.maxLength >= 0 && !leaf(schemaStrings, true, func(v bson.RawValue) bool {
		return v.Type == bson.TypeString && int64(utf8.RuneCountInString(v.StringValue())) <= s.maxLength
	}) {
		return false
	}
	if s.minLength >= 0 && !leaf(schemaStrings, true, func(v bson.RawValue) bool {
		return v.Type == bson.TypeString && int64(utf8.RuneCountInString(v.StringValue())) >= s.minLength
	}) {
		return false
	}
	if s.multipleOf && !leaf(schemaNumbers, true, func(v bson.RawValue) bool {
		return values.IsNumber(v.Type) && s.isMultiple(v)
	}) {
		return false
	}
	for _, b := range []*schemaBound{s.maximum, s.minimum} {
		if b != nil && !leaf(schemaNumbers, true, func(v bson.RawValue) bool { return compareMatches(b.op, v, b.value) }) {
			return false
		}
	}

	// Array keywords: $_internalSchemaMinItems, ..., one
	// $_internalSchemaAllElemMatchFromIndex for items as one schema and for
	// additionalItems, and for items as an array one restriction of a
	// $_internalSchemaMatchArrayIndex for each position.
	array := func(test func(arr []byte) bool) predicate {
		return func(v bson.RawValue) bool { return v.Type == bson.TypeArray && test(v.Value) }
	}
	if s.minItems >= 0 && !leaf(schemaArrays, false, array(func(a []byte) bool { return int64(rawdoc.Len(a)) >= s.minItems })) {
		return false
	}
	if s.maxItems >= 0 && !leaf(schemaArrays, false, array(func(a []byte) bool { return int64(rawdoc.Len(a)) <= s.maxItems })) {
		return false
	}
	if s.uniqueItems && !leaf(schemaArrays, false, array(distinctElements)) {
		return false
	}
	if s.items != nil && !leaf(schemaArrays, false, array(func(a []byte) bool { return itemsMatch(a, 0, s.items) })) {
		return false
	}
	if len(s.tuple) > 0 && !restrict(schemaArrays, func() bool {
		for i, sub := range s.tuple {
			if !at(false, array(func(a []byte) bool { return itemMatches(a, i, sub) })) {
				return false
			}
		}
		return true
	}) {
		return false
	}
	if s.tuple != nil && s.additionalItems != nil && !leaf(schemaArrays, false, array(func(a []byte) bool { return itemsMatch(a, len(s.tuple), s.additionalItems) })) {
		return false
	}

	// encrypt: $_internalSchemaBinDataSubType and, with its bsonType,
	// $_internalSchemaBinDataEncryptedType, not restricted to BinData.
	if s.encrypt && !(at(true, func(v bson.RawValue) bool { sub, _, ok := v.BinaryOK(); return ok && sub == bson.TypeBinaryEncrypted }) &&
		(!s.hasEncryptedTypes || at(true, func(v bson.RawValue) bool { return v.Type == bson.TypeBinary && s.encryptedMatches(v) }))) {
		return false
	}

	// Object keywords: each a $_internalSchemaObjectMatch of its own;
	// dependencies are not restricted to objects, and a schema dependency
	// applies at the same path.
	object := func(test func(doc []byte) bool) predicate {
		return func(v bson.RawValue) bool { return v.Type == bson.TypeEmbeddedDocument && test(v.Value) }
	}
	if len(s.properties) > 0 && !leaf(schemaObjects, false, object(s.propertiesMatch)) {
		return false
	}
	if s.checkAllowed && !leaf(schemaObjects, false, object(s.allowedMatch)) {
		return false
	}
	if len(s.required) > 0 && !leaf(schemaObjects, false, object(s.requiredMatch)) {
		return false
	}
	if s.minProps >= 0 && !leaf(schemaObjects, false, object(func(d []byte) bool { return int64(rawdoc.Len(d)) >= s.minProps })) {
		return false
	}
	if s.maxProps >= 0 && !leaf(schemaObjects, false, object(func(d []byte) bool { return int64(rawdoc.Len(d)) <= s.maxProps })) {
		return false
	}
	for _, d := range s.dependencies {
		if !at(false, object(d.name.exists)) {
			continue
		}
		for _, n := range d.props {
			if !at(false, object(n.exists)) {
				return false
			}
		}
		if d.schema != nil && !d.schema.matchesAt(doc, p) {
			return false
		}
	}

	// Logical keywords: the subschemas apply at the same path; enum is an
	// $or of $_internalSchemaEq.
	for _, sub := range s.allOf {
		if !sub.matchesAt(doc, p) {
			return false
		}
	}
	if len(s.anyOf) > 0 && !slices.ContainsFunc(s.anyOf, func(sub *jsonSchema) bool { return sub.matchesAt(doc, p) }) {
		return false
	}
	if len(s.oneOf) > 0 {
		n := 0
		for _, sub := range s.oneOf {
			if sub.matchesAt(doc, p) {
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	if s.not != nil && s.not.matchesAt(doc, p) {
		return false
	}
	return !s.hasEnum || at(false, func(v bson.RawValue) bool { return v.Type != 0 && s.enumHas(v) })
}

// SchemaNameExists reports whether the embedded document doc has a value
// at name, a name of properties, required or dependencies, which MongoDB
// reads as a field path (a dotted name reaches into embedded documents
// and through arrays).
func SchemaNameExists(doc []byte, name string) bool {
	return newSchemaName(name).exists(doc)
}

// SchemaNameValue is the value at name (as SchemaNameExists reads it) in
// doc when the name holds at most one value: single is false when a dotted
// name meets an array before its last component, where it may hold
// several.
func SchemaNameValue(doc []byte, name string) (v bson.RawValue, single bool) {
	first, rest, dotted := strings.Cut(name, ".")
	v = rawdoc.Lookup(doc, first)
	for dotted {
		switch v.Type {
		case bson.TypeArray:
			return bson.RawValue{}, false
		case bson.TypeEmbeddedDocument:
		default:
			return bson.RawValue{}, true
		}
		first, rest, dotted = strings.Cut(rest, ".")
		v = rawdoc.Lookup(v.Value, first)
	}
	return v, true
}
