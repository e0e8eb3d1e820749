package commands

import (
	"math"
	"math/bits"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// Every command declares every field it takes in an argSpec (registered
// with its handler); so does every sub-document parsed as MongoDB's IDL
// parses a struct (an update statement, a cursor option). Parsing a
// command against its spec, once and before the handler runs, refuses what
// MongoDB's IDL refuses: an unknown field (40415), a field given twice
// (40413), a field of the wrong BSON type (TypeMismatch), a missing
// required field (40414); and it refuses with NotImplemented a field Folio
// does not honour. Handlers then read the parsed values (cmdArgs), never
// the command itself; reading a field not declared as honoured panics.

// argUse is what Folio does with a declared field.
type argUse uint8

const (
	// honoured: the handler reads the field and does what MongoDB does.
	honoured argUse = iota
	// refused: any value fails with NotImplemented naming the field.
	refused
	// refusedTrue: true fails with NotImplemented; false asks for
	// MongoDB's default, which is what Folio does.
	refusedTrue
	// ignored: accepted (its type checked) and without effect, as on a
	// one-member MongoDB replica set; docs/COMMANDS.md lists each such
	// field with the reason.
	ignored
)

// argType is a declared field's accepted BSON types and how MongoDB's type
// error names them.
type argType struct {
	mask uint32 // bit typeBit(t) for each accepted type t
	// want names the accepted types as MongoDB's type error lists them:
	// one type alone (checkAndAssertType), several as a list
	// (throwBadType); see mongoerr.WrongType and WrongTypes.
	want []string
	// mismatch, when set, is the error of a value of another type, for a
	// type whose IDL deserializer checks the type itself.
	mismatch func(field string, v bson.RawValue) error
	// null is how a null or undefined value is read when the type does
	// not accept it.
	null nullReading
	// check, when set, validates a value of an accepted type as the
	// type's deserializer does (a UUID's subtype and length).
	check func(path, field string, v bson.RawValue) error
}

// wrongType is MongoDB's type error of v, the value of the field at path.
func (t *argType) wrongType(path string, v bson.RawValue) error {
	if len(t.want) == 1 {
		return mongoerr.WrongType(path, values.TypeName(v.Type), t.want[0])
	}
	return mongoerr.WrongTypes(path, values.TypeName(v.Type), t.want...)
}

// nullReading is how MongoDB's IDL reads a null (or undefined) value of a
// field whose type does not take null.
type nullReading uint8

const (
	// nullAbsent: the field's absence; checkAndAssertType skips null
	// and undefined, so a required field is then missing (40414).
	nullAbsent nullReading = iota
	// nullWrongType: a value of the wrong type, for a deserializer that
	// sees every element it is given.
	nullWrongType
	// nullNotObject: an IDL array<T> field's. Its type check skips the
	// null, but its array parser still reads the element with
	// BSONElement::Obj(), which refuses it with 10065 "invalid parameter:
	// expected an object (<field>)".
	nullNotObject
)

// typeBit maps a BSON type to its bit in argType.mask.
func typeBit(t bson.Type) uint32 {
	switch t {
	case bson.TypeMaxKey:
		return 1 << 30
	case bson.TypeMinKey:
		return 1 << 31
	}
	return 1 << (t & 0x1f)
}

func typeMask(ts ...bson.Type) uint32 {
	var m uint32
	for _, t := range ts {
		m |= typeBit(t)
	}
	return m
}

var numberMask = typeMask(bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128)

// The declared types. As in MongoDB's IDL, a null or undefined value of a
// typed field counts as the field's absence, but for an array<T> field
// (tArray) and the types whose null is a wrong type.
var (
	// tAny is any value, null included, checked by the handler.
	tAny = argType{mask: ^uint32(0)}
	// tBool is a bool, or a number (non-zero is true), as MongoDB's
	// safeBool reads it. A field the IDL types optionalBool, which refuses
	// numbers and null, is tOptionalBool; fields not yet checked against
	// their IDL type are tBool still.
	tBool = argType{mask: typeMask(bson.TypeBoolean) | numberMask, want: append([]string{"bool"}, mongoerr.NumberTypes()...)}
	// tStrictBool is MongoDB's IDL bool: a bool only.
	tStrictBool = argType{mask: typeMask(bson.TypeBoolean), want: []string{"bool"}}
	// tLong is any number whose value is whole (cmdArgs.long refuses a
	// fraction); tSafe is the IDL's safeInt64 (or safeInt): any number,
	// a fraction truncated (cmdArgs.safeInt).
	tLong   = argType{mask: numberMask, want: []string{"long"}}
	tInt32  = argType{mask: typeMask(bson.TypeInt32), want: []string{"int"}}
	tSafe   = argType{mask: numberMask, want: mongoerr.NumberTypes()}
	tDoc    = argType{mask: typeMask(bson.TypeEmbeddedDocument), want: []string{"object"}}
	tString = argType{mask: typeMask(bson.TypeString), want: []string{"string"}}
	// tArray is the IDL's array<T>: null is refused (nullNotObject).
	tArray = argType{mask: typeMask(bson.TypeArray), want: []string{"array"}, null: nullNotObject}
	// tLooseArray is an array a command reads without an IDL (or a fail
	// point reads from its data): null is absent.
	tLooseArray = argType{mask: typeMask(bson.TypeArray), want: []string{"array"}}
	// tPipeline is aggregate's pipeline, a field of type any which
	// parsePipelineFromBSON reads: an array of documents, null refused.
	tPipeline = argType{mask: typeMask(bson.TypeArray), want: []string{"array"}, null: nullWrongType,
		mismatch: func(string, bson.RawValue) error {
			return mongoerr.New(mongoerr.TypeMismatch, "'pipeline' option must be specified as an array")
		},
		check: checkPipelineStages}
	tObjectID = argType{mask: typeMask(bson.TypeObjectID), want: []string{"objectId"}}
	// tNumberLong is the IDL's long: a NumberLong only (tLong and tSafe
	// take any number).
	tNumberLong = argType{mask: typeMask(bson.TypeInt64), want: []string{"long"}}
	// tUUID is the IDL's uuid: a binData of subtype 4 and 16 bytes.
	tUUID = argType{mask: typeMask(bson.TypeBinary), want: []string{"binData"}, check: checkUUID}
	// tSHA256 is the IDL's sha256Block: a generic binData of 32 bytes (a
	// user digest).
	tSHA256 = argType{mask: typeMask(bson.TypeBinary), want: []string{"binData"}, check: checkSHA256}
	// tBoolOrUUID is the IDL's variant of bool and uuid, whose binData
	// alternative UUID::parse reads (any other subtype is InvalidUUID).
	tBoolOrUUID = argType{mask: typeMask(bson.TypeBoolean, bson.TypeBinary), want: []string{"bool", "binData"}, check: checkVariantUUID}
	// tStringOrSafe is the IDL's variant of string and safeInt64.
	tStringOrSafe = argType{mask: typeMask(bson.TypeString) | numberMask, want: append([]string{"string"}, mongoerr.NumberTypes()...)}
	// tSafeBoolOrDoc is the IDL's variant of safeBool (see tBool) and
	// object.
	tSafeBoolOrDoc = argType{mask: tBool.mask | typeMask(bson.TypeEmbeddedDocument), want: append(append([]string{}, tBool.want...), "object")}
	// tUpdate is an update: a document of operators or a replacement, or
	// an array (a pipeline); UpdateModification's parser, which the IDL
	// calls on every element (its type is any), refuses the rest, null
	// included, and reads a pipeline with parsePipelineFromBSON, so a
	// stage that is not a document fails the command too.
	tUpdate = argType{mask: typeMask(bson.TypeEmbeddedDocument, bson.TypeArray), want: []string{"object"}, null: nullWrongType, mismatch: func(string, bson.RawValue) error {
		return mongoerr.New(mongoerr.FailedToParse, "Update argument must be either an object or an array")
	}, check: func(path, field string, v bson.RawValue) error {
		if v.Type != bson.TypeArray {
			return nil
		}
		return checkPipelineStages(path, field, v)
	}}
	// tOptionalBool is the IDL's optionalBool as its own parser reads it:
	// a bool only, null refused too. (tBool is safeBool's reading.)
	tOptionalBool = argType{mask: typeMask(bson.TypeBoolean), want: []string{"bool"}, null: nullWrongType, mismatch: func(field string, v bson.RawValue) error {
		return mongoerr.New(mongoerr.TypeMismatch, "Field '%s' should be a boolean value, but found: %s", field, values.TypeName(v.Type))
	}}
	// tOwnedObject is find's object_owned_nonempty_serialize, of type
	// any: the IDL checks no type, and its deserializer (parseOwnedBSON)
	// refuses anything but a document, null included, with its message as
	// MongoDB writes it (no space before "to").
	tOwnedObject = argType{mask: typeMask(bson.TypeEmbeddedDocument), want: []string{"object"}, null: nullWrongType, mismatch: func(field string, _ bson.RawValue) error {
		return mongoerr.New(mongoerr.TypeMismatch, "Expected field %sto be of type object", field)
	}}
	// tHint is the IDL's indexHint, which parseHint reads
	// (hint_parser.cpp): an index name or a key pattern; anything else,
	// null included, fails the command with FailedToParse (find, count,
	// aggregate, findAndModify, and each update and delete statement).
	tHint = argType{mask: typeMask(bson.TypeString, bson.TypeEmbeddedDocument), want: []string{"string", "object"}, null: nullWrongType, mismatch: func(string, bson.RawValue) error {
		return mongoerr.New(mongoerr.FailedToParse, "Hint must be a string or an object")
	}}
	// tAggregateCursor is aggregate's cursor (parseAggregateCursorFromBSON):
	// a document, null refused.
	tAggregateCursor = argType{mask: typeMask(bson.TypeEmbeddedDocument), want: []string{"object"}, null: nullWrongType, mismatch: func(string, bson.RawValue) error {
		return mongoerr.New(mongoerr.TypeMismatch, "cursor field must be missing or an object")
	}}
	// tExplain is aggregate's explain (parseExplainModeFromBSON): a bool,
	// null refused.
	tExplain = argType{mask: typeMask(bson.TypeBoolean), want: []string{"bool"}, null: nullWrongType, mismatch: func(string, bson.RawValue) error {
		return mongoerr.New(mongoerr.TypeMismatch, "explain must be a boolean")
	}}
)

// argField declares one field.
type argField struct {
	name string
	typ  argType
	use  argUse
	// required fields missing fail with 40414.
	required bool
	// def is the value of an absent bool (non-zero: true) or integer.
	def int64
	// note says why an ignored field has no effect (docs/COMMANDS.md) or
	// what a refused one would need.
	note string
}

// argSpec declares the fields of a command or sub-document.
type argSpec struct {
	// path names the command or sub-document in errors as MongoDB's IDL
	// parser names it: "update.updates", "FindCommandRequest" (the struct
	// find is parsed as).
	path   string
	fields []argField
	// value, when set, declares the command's own value (its first
	// field), for a command whose IDL types it (namespace: type): its
	// name is the command's; a null is read as its type's null is.
	value *argField
	// open, when set, says why the command takes fields it cannot
	// declare (parameter names, a filter): they reach the handler through
	// cmdArgs.eachExtra instead of failing with 40415.
	open string
	// subs are the specs of its sub-documents, for the registry's walk.
	subs []*argSpec
}

// untyped is the spec of a command MongoDB runs without parsing its fields
// (a BasicCommand with no IDL): it reads what it needs and ignores the rest,
// so an unknown field is not an error there either.
func untyped(path string, fields ...argField) *argSpec {
	return &argSpec{path: path, fields: fields, open: "MongoDB does not parse this command's fields (no IDL): it ignores those it does not read"}
}

// maxArgFields bounds a spec's fields (parse tracks them in a uint64).
const maxArgFields = 64

// Field declaration helpers.
func arg(name string, t argType) argField { return argField{name: name, typ: t} }
func required(name string, t argType) argField {
	return argField{name: name, typ: t, required: true}
}
func withDefault(name string, t argType, def int64) argField {
	return argField{name: name, typ: t, def: def}
}
func refuse(name string, t argType, note string) argField {
	return argField{name: name, typ: t, use: refused, note: note}
}
func refuseTrue(name string, t argType, note string) argField {
	return argField{name: name, typ: t, use: refusedTrue, note: note}
}
func ignore(name string, t argType, note string) argField {
	return argField{name: name, typ: t, use: ignored, note: note}
}

// cmdArgs are a command's (or sub-document's) fields parsed against its
// spec. Only the fields given are held: bit i of set says spec.fields[i]
// was given (not null), and vals holds their values in declaration order.
type cmdArgs struct {
	spec *argSpec
	raw  bson.Raw
	// isCommand: doc is a command (its first field and generic
	// arguments are not its spec's).
	isCommand bool
	set       uint64
	// The values of the fields set, in the order of spec.fields: in inl
	// while there are at most len(inl) (most commands and sub-documents
	// give no more, and they then need no allocation), else all in more.
	inl  [4]bson.RawValue
	more []bson.RawValue
	// cmdValue is the command's own value as spec.value declares it,
	// Type 0 when that is absent or spec.value is nil.
	cmdValue bson.RawValue
}

// val is the value of spec.fields[i], Type 0 when absent.
func (a *cmdArgs) val(i int) bson.RawValue {
	if a.set&(1<<i) == 0 {
		return bson.RawValue{}
	}
	rank := bits.OnesCount64(a.set & (1<<i - 1))
	if a.more != nil {
		return a.more[rank]
	}
	return a.inl[rank]
}

// put records v as the value of spec.fields[i], given once.
func (a *cmdArgs) put(i int, v bson.RawValue) {
	rank, n := bits.OnesCount64(a.set&(1<<i-1)), bits.OnesCount64(a.set)
	a.set |= 1 << i
	switch {
	case a.more != nil:
		a.more = slices.Insert(a.more, rank, v)
	case n < len(a.inl):
		copy(a.inl[rank+1:n+1], a.inl[rank:n])
		a.inl[rank] = v
	default:
		a.more = slices.Insert(append(make([]bson.RawValue, 0, 2*n), a.inl[:n]...), rank, v)
		a.inl = [len(a.inl)]bson.RawValue{}
	}
}

// parseCommand parses cmd's own fields (all but its name and the generic
// arguments) against spec.
func parseCommand(cmd bson.Raw, spec *argSpec) (cmdArgs, error) {
	return parseArgs(cmd, spec, true, false)
}

// parseStrictCommand is parseCommand under the Stable API's apiStrict: a
// field the command's IDL marks unstable (unstableFields) fails with
// APIStrictError before anything else is said of it, as in MongoDB.
func parseStrictCommand(cmd bson.Raw, spec *argSpec) (cmdArgs, error) {
	return parseArgs(cmd, spec, true, true)
}

// parseSub parses a sub-document against spec.
func parseSub(doc bson.Raw, spec *argSpec) (cmdArgs, error) {
	return parseArgs(doc, spec, false, false)
}

func parseArgs(doc bson.Raw, spec *argSpec, isCommand, apiStrict bool) (cmdArgs, error) {
	a := cmdArgs{spec: spec, raw: doc, isCommand: isCommand}
	var seen uint64
	// owner names the command or sub-document in Folio's own refusals:
	// the command's name, which its IDL struct's (spec.path) may not be
	owner := spec.path
	var cmdValue bson.RawValue
	it := rawdoc.Iterate(doc)
	for first := true; ; first = false {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if isCommand && first {
			owner = string(k)
			cmdValue = v
			continue
		}
		if isCommand && isGenericArg(string(k)) && spec.find(string(k)) < 0 {
			// a generic argument the command does not declare itself
			// (the writes declare stmtId)
			continue
		}
		if apiStrict && unstableFields[spec.path][string(k)] {
			return a, mongoerr.New(mongoerr.APIStrictError, "BSON field '%s.%s' is not allowed with apiStrict:true.", spec.path, k)
		}
		i := spec.find(string(k))
		if i < 0 {
			if spec.open != "" {
				continue
			}
			return a, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", spec.path, k)
		}
		if seen&(1<<i) != 0 {
			return a, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '%s.%s' is a duplicate field", spec.path, k)
		}
		seen |= 1 << i
		f := &spec.fields[i]
		if f.typ.mask&typeBit(v.Type) == 0 {
			if v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
				switch f.typ.null {
				case nullAbsent:
					continue // absent, as MongoDB's IDL reads it
				case nullNotObject:
					return a, mongoerr.ExpectedObject(f.name)
				}
			}
			if f.typ.mismatch != nil {
				return a, f.typ.mismatch(f.name, v)
			}
			return a, f.typ.wrongType(spec.path+"."+f.name, v)
		}
		if f.typ.check != nil {
			if err := f.typ.check(spec.path, f.name, v); err != nil {
				return a, err
			}
		}
		switch f.use {
		case refused:
			return a, notImplementedArg(owner, f)
		case refusedTrue:
			if values.Truthy(v) {
				return a, notImplementedArg(owner, f)
			}
		}
		a.put(i, v)
	}
	for i := range spec.fields {
		if f := &spec.fields[i]; f.required && a.set&(1<<i) == 0 {
			return a, missingArg(spec.path, f.name)
		}
	}
	// the IDL parses the command's own value after its fields
	if f := spec.value; f != nil {
		if err := a.readValue(cmdValue); err != nil {
			return a, err
		}
		if f.required && a.cmdValue.Type == 0 {
			return a, missingArg(spec.path, f.name)
		}
	}
	return a, nil
}

// missingArg is the IDL's refusal of a required field not given.
func missingArg(path, name string) error {
	return mongoerr.MissingField(path + "." + name)
}

// readValue reads the command's own value v as a.spec.value declares it.
func (a *cmdArgs) readValue(v bson.RawValue) error {
	f := a.spec.value
	if f.typ.mask&typeBit(v.Type) == 0 {
		if (v.Type == bson.TypeNull || v.Type == bson.TypeUndefined) && f.typ.null == nullAbsent {
			return nil // missing: the IDL's command field check skips it
		}
		if f.typ.mismatch != nil {
			return f.typ.mismatch(f.name, v)
		}
		return f.typ.wrongType(a.spec.path+"."+f.name, v)
	}
	if f.typ.check != nil {
		if err := f.typ.check(a.spec.path, f.name, v); err != nil {
			return err
		}
	}
	a.cmdValue = v
	return nil
}

// commandValue is the command's own value as its spec declares it
// (argSpec.value); Type 0 when absent or null.
func (a *cmdArgs) commandValue() bson.RawValue {
	if a.spec.value == nil {
		panic("commands: " + a.spec.path + " reads its value, not declared")
	}
	return a.cmdValue
}

// notImplementedArg is the refusal of a field Folio does not honour, given
// to the command or sub-document named owner.
func notImplementedArg(owner string, f *argField) error {
	if f.use == refusedTrue {
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the option '%s: true' of %s (%s)", f.name, owner, f.note)
	}
	return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the option '%s' of %s (%s)", f.name, owner, f.note)
}

// find is the index of the field named name, -1 if it is not declared.
func (s *argSpec) find(name string) int {
	for i := range s.fields {
		if s.fields[i].name == name {
			return i
		}
	}
	return -1
}

// at returns the declaration and value of an honoured field; reading a
// field not declared so is a programming error.
func (a *cmdArgs) at(name string) (*argField, bson.RawValue) {
	i := a.spec.find(name)
	if i < 0 || a.spec.fields[i].use != honoured {
		panic("commands: " + a.spec.path + " reads field '" + name + "', not declared as honoured")
	}
	return &a.spec.fields[i], a.val(i)
}

// present names the declared fields given, in declaration order.
func (a *cmdArgs) present() []string {
	var out []string
	for i := range a.spec.fields {
		if a.set&(1<<i) != 0 {
			out = append(out, a.spec.fields[i].name)
		}
	}
	return out
}

// first is a command's first field's value (its collection, say).
func (a *cmdArgs) first() bson.RawValue {
	it := rawdoc.Iterate(a.raw)
	_, v, _ := it.Next()
	return v
}

// has reports whether the field was given (not null).
func (a *cmdArgs) has(name string) bool {
	_, v := a.at(name)
	return v.Type != 0
}

// given reports whether a field was given, whether or not the spec
// declares it (for parsing shared by commands declaring different fields).
func (a *cmdArgs) given(name string) bool {
	i := a.spec.find(name)
	return i >= 0 && a.spec.fields[i].use == honoured && a.set&(1<<i) != 0
}

// value is the field's value; Type 0 when absent.
func (a *cmdArgs) value(name string) bson.RawValue {
	_, v := a.at(name)
	return v
}

// doc is an object field's value; nil when absent.
func (a *cmdArgs) doc(name string) bson.Raw {
	_, v := a.at(name)
	if v.Type != bson.TypeEmbeddedDocument {
		return nil
	}
	return v.Document()
}

// str is a string field's value; "" when absent.
func (a *cmdArgs) str(name string) string {
	_, v := a.at(name)
	s, _ := v.StringValueOK()
	return s
}

// bool is a bool field's value (a number is true when non-zero); the
// declared default when absent.
func (a *cmdArgs) bool(name string) bool {
	f, v := a.at(name)
	if v.Type == 0 {
		return f.def != 0
	}
	return values.Truthy(v)
}

// boolOr is a boolean field's value, def when absent (a default that is
// a server parameter, not a constant of the declaration).
func (a *cmdArgs) boolOr(name string, def bool) bool {
	if _, v := a.at(name); v.Type == 0 {
		return def
	}
	return a.bool(name)
}

// long is a whole-number field's value, the declared default when absent;
// a fraction or a value beyond ±2^62 fails as MongoDB's IDL fails it.
func (a *cmdArgs) long(name string) (int64, error) {
	f, v := a.at(name)
	switch v.Type {
	case 0:
		return f.def, nil
	case bson.TypeInt32:
		return int64(v.Int32()), nil
	case bson.TypeInt64:
		return v.Int64(), nil
	}
	x, _ := values.Float64(v)
	if x != math.Trunc(x) || math.IsNaN(x) || math.Abs(x) > 1<<62 {
		return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s.%s' value must be a whole number, but got %v", a.spec.path, name, x)
	}
	return int64(x), nil
}

// safeInt is a safeInt64 field's value (see safeInt64), the declared
// default when absent.
func (a *cmdArgs) safeInt(name string) int64 {
	f, v := a.at(name)
	if v.Type == 0 {
		return f.def
	}
	n, _ := safeInt64(v)
	return n
}

// docs is an array-of-objects field's elements; nil when absent.
func (a *cmdArgs) docs(name string) ([]bson.Raw, error) {
	_, v := a.at(name)
	if v.Type == 0 {
		return nil, nil
	}
	return docsArg(a.spec.path, name, v)
}

// eachExtra calls fn for each field of an open spec's command that the
// spec does not declare (generic arguments and the command name aside).
func (a *cmdArgs) eachExtra(fn func(key string, v bson.RawValue) error) error {
	if a.spec.open == "" {
		panic("commands: " + a.spec.path + " reads undeclared fields but is not open")
	}
	it := rawdoc.Iterate(a.raw)
	for first := true; ; first = false {
		k, v, ok := it.Next()
		if !ok {
			return nil
		}
		key := string(k)
		if (a.isCommand && (first || isGenericArg(key))) || a.spec.find(key) >= 0 {
			continue
		}
		if err := fn(key, v); err != nil {
			return err
		}
	}
}

// wrongType is MongoDB's error for a command field of the wrong BSON type.
func wrongType(cmd, field string, v bson.RawValue, want string) error {
	return mongoerr.WrongType(cmd+"."+field, values.TypeName(v.Type), want)
}

// collectionArg reads the collection name a command on db names in its
// first field, validating the namespace as MongoDB does.
func collectionArg(cmd bson.Raw, db string) (string, error) {
	el, err := cmd.IndexErr(0)
	if err != nil {
		return "", mongoerr.New(mongoerr.FailedToParse, "Empty command object")
	}
	v := el.Value()
	if v.Type != bson.TypeString {
		return "", mongoerr.New(mongoerr.InvalidNamespace,
			"collection name has invalid type %s", values.TypeName(v.Type))
	}
	// NamespaceString's constructor and isValid
	name := v.StringValue()
	if err := nsname.CheckSpecified(db, name); err != nil {
		return "", err
	}
	return name, nil
}

// checkPipelineStages is MongoDB's parsePipelineFromBSON: every element of
// a pipeline is a document.
func checkPipelineStages(_, _ string, v bson.RawValue) error {
	vals, _ := v.Array().Values()
	for _, el := range vals {
		if el.Type != bson.TypeEmbeddedDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
	}
	return nil
}
