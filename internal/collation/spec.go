package collation

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
)

// Version is the ICU version MongoDB 7.0 reports in every collation.
const Version = "57.1"

// Simple is the locale of binary comparison.
const Simple = "simple"

// Spec is a collation with every field filled, as MongoDB reports it.
type Spec struct {
	Locale          string
	CaseLevel       bool
	CaseFirst       string // "upper", "lower" or "off"
	Strength        int    // 1 to 5
	NumericOrdering bool
	Alternate       string // "non-ignorable" or "shifted"
	MaxVariable     string // "punct" or "space"
	Normalization   bool
	Backwards       bool
}

// Parse validates a collation document as MongoDB does and returns its
// collator, nil for {locale: "simple"} (binary comparison). What Folio
// cannot honour exactly is refused with NotImplemented.
func Parse(doc bson.Raw) (*Collator, error) {
	s, err := ParseSpec(doc)
	if err != nil || s == nil {
		return nil, err
	}
	if s.Locale == "ja" && s.Strength >= 4 && s.Alternate == "shifted" {
		// Japanese tells kana apart at the quaternary level, which shifted
		// variables also use; how ICU merges the two is not built here.
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the collation option alternate: \"shifted\" with strength %d in locale ja", s.Strength)
	}
	if c, ok := collators.Load(*s); ok {
		return c.(*Collator), nil
	}
	c, _ := collators.LoadOrStore(*s, newCollator(*s))
	return c.(*Collator), nil
}

// collators are the collators built so far, by definition: each keeps a
// pool of x/text collators, whose tables take time to set up. The
// definitions are few (MongoDB's locales times the options).
var collators sync.Map

// ParseSpec validates a collation document and fills the fields it leaves
// out with the locale's defaults; nil for the simple collation.
func ParseSpec(doc bson.Raw) (*Spec, error) {
	locale, err := stringField(doc, "locale")
	if err != nil {
		return nil, err
	}
	if strings.IndexByte(locale, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Field 'locale' cannot contain null byte. Collation spec: %s", Show(doc))
	}
	elems, _ := doc.Elements()
	if locale == Simple {
		if len(elems) > 1 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "If locale=simple, no other fields should be present in: %s", Show(doc))
		}
		return nil, nil
	}
	if locale == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "Field 'locale' cannot be the empty string in: %s", Show(doc))
	}
	if strings.Contains(locale, "@") {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the collation variant in locale '%s'", locale)
	}
	s, ok := locales[locale]
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "Field 'locale' is invalid in: %s", Show(doc))
	}
	parsed := 1
	if v, ok, err := boolField(doc, "caseLevel"); err != nil {
		return nil, err
	} else if ok {
		s.CaseLevel, parsed = v, parsed+1
	}
	if v, err := optString(doc, "caseFirst"); err != nil {
		return nil, err
	} else if v != nil {
		if *v != "upper" && *v != "lower" && *v != "off" {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Field 'caseFirst' must be 'upper', 'lower', or 'off'. Got: %s", *v)
		}
		s.CaseFirst, parsed = *v, parsed+1
	}
	if v, ok, err := intField(doc, "strength"); err != nil {
		return nil, err
	} else if ok {
		if v < 1 || v > 5 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Field 'strength' must be an integer 1 through 5. Got: %d", v)
		}
		s.Strength, parsed = int(v), parsed+1
	}
	if v, ok, err := boolField(doc, "numericOrdering"); err != nil {
		return nil, err
	} else if ok {
		s.NumericOrdering, parsed = v, parsed+1
	}
	if v, err := optString(doc, "alternate"); err != nil {
		return nil, err
	} else if v != nil {
		if *v != "non-ignorable" && *v != "shifted" {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Field 'alternate' must be 'non-ignorable' or 'shifted'. Got: %s", *v)
		}
		s.Alternate, parsed = *v, parsed+1
	}
	if v, err := optString(doc, "maxVariable"); err != nil {
		return nil, err
	} else if v != nil {
		if *v != "punct" && *v != "space" {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Field 'maxVariable' must be 'punct' or 'space'. Got: %s", *v)
		}
		s.MaxVariable, parsed = *v, parsed+1
	}
	if v, ok, err := boolField(doc, "normalization"); err != nil {
		return nil, err
	} else if ok {
		s.Normalization, parsed = v, parsed+1
	}
	if v, ok, err := boolField(doc, "backwards"); err != nil {
		return nil, err
	} else if ok {
		s.Backwards, parsed = v, parsed+1
	}
	if v, err := optString(doc, "version"); err != nil {
		return nil, err
	} else if v != nil {
		if *v != Version {
			return nil, mongoerr.New(mongoerr.IncompatibleCollationVersion, "Requested collation version %s but the only available collator version was %s. Requested collation spec: %s", *v, Version, Show(doc))
		}
		parsed++
	}
	if parsed < len(elems) {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Collation spec contains unknown field. Collation spec: %s", Show(doc))
	}
	if s.Backwards && s.Strength == 1 {
		return nil, mongoerr.New(mongoerr.BadValue, "'backwards' is invalid with 'strength' of 1 in: %s", Show(s.Document()))
	}
	if s.CaseFirst != "off" && !s.CaseLevel && s.Strength <= 2 {
		return nil, mongoerr.New(mongoerr.BadValue, "'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: %s", Show(s.Document()))
	}
	return &s, nil
}

// Document is the collation as MongoDB reports it back, every field set.
func (s *Spec) Document() bson.Raw {
	start, d := bsoncore.AppendDocumentStart(nil)
	d = bsoncore.AppendStringElement(d, "locale", s.Locale)
	d = bsoncore.AppendBooleanElement(d, "caseLevel", s.CaseLevel)
	d = bsoncore.AppendStringElement(d, "caseFirst", s.CaseFirst)
	d = bsoncore.AppendInt32Element(d, "strength", int32(s.Strength))
	d = bsoncore.AppendBooleanElement(d, "numericOrdering", s.NumericOrdering)
	d = bsoncore.AppendStringElement(d, "alternate", s.Alternate)
	d = bsoncore.AppendStringElement(d, "maxVariable", s.MaxVariable)
	d = bsoncore.AppendBooleanElement(d, "normalization", s.Normalization)
	d = bsoncore.AppendBooleanElement(d, "backwards", s.Backwards)
	d = bsoncore.AppendStringElement(d, "version", Version)
	d, _ = bsoncore.AppendDocumentEnd(d, start)
	return d
}

func stringField(doc bson.Raw, name string) (string, error) {
	v, err := optString(doc, name)
	if err != nil {
		return "", err
	}
	if v == nil {
		return "", mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"%s\"", name)
	}
	return *v, nil
}

func optString(doc bson.Raw, name string) (*string, error) {
	v, err := doc.LookupErr(name)
	if err != nil {
		return nil, nil
	}
	s, ok := v.StringValueOK()
	if !ok {
		return nil, wrongType(name, "string", v.Type)
	}
	return &s, nil
}

func boolField(doc bson.Raw, name string) (val, present bool, err error) {
	v, lerr := doc.LookupErr(name)
	if lerr != nil {
		return false, false, nil
	}
	b, ok := v.BooleanOK()
	if !ok {
		return false, false, wrongType(name, "bool", v.Type)
	}
	return b, true, nil
}

func intField(doc bson.Raw, name string) (int64, bool, error) {
	v, err := doc.LookupErr(name)
	if err != nil {
		return 0, false, nil
	}
	var f float64
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true, nil
	case bson.TypeInt64:
		return v.Int64(), true, nil
	case bson.TypeDouble:
		f = v.Double()
	case bson.TypeDecimal128:
		bf, _, err := new(big.Float).Parse(v.Decimal128().String(), 10)
		if err != nil {
			f = math.NaN()
		} else {
			f, _ = bf.Float64()
		}
	default:
		return 0, false, mongoerr.New(mongoerr.TypeMismatch, "Expected field \"%s\" to have numeric type, but found %s", name, typeName(v.Type))
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false, mongoerr.New(mongoerr.BadValue, "Expected field \"%s\" to have a value exactly representable as a 64-bit integer, but found %s: %s", name, name, showValue(v))
	}
	return int64(f), true, nil
}

func wrongType(name, want string, got bson.Type) error {
	return mongoerr.New(mongoerr.TypeMismatch, "\"%s\" had the wrong type. Expected %s, found %s", name, want, typeName(got))
}

// typeName is MongoDB's name of a BSON type as its errors spell it.
func typeName(t bson.Type) string {
	switch t {
	case bson.TypeDouble:
		return "double"
	case bson.TypeString:
		return "string"
	case bson.TypeEmbeddedDocument:
		return "object"
	case bson.TypeArray:
		return "array"
	case bson.TypeBoolean:
		return "bool"
	case bson.TypeNull:
		return "null"
	case bson.TypeInt32:
		return "int"
	case bson.TypeInt64:
		return "long"
	case bson.TypeDecimal128:
		return "decimal"
	case bson.TypeDateTime:
		return "date"
	case bson.TypeObjectID:
		return "objectId"
	}
	return t.String()
}

// Show renders a document as MongoDB's messages print it:
// { locale: "xx", strength: 2 }.
func Show(doc bson.Raw) string {
	elems, _ := doc.Elements()
	if len(elems) == 0 {
		return "{}"
	}
	var b strings.Builder
	b.WriteString("{ ")
	for i, el := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(el.Key())
		b.WriteString(": ")
		b.WriteString(showValue(el.Value()))
	}
	b.WriteString(" }")
	return b.String()
}

func showValue(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeString:
		return strconv.Quote(v.StringValue())
	case bson.TypeBoolean:
		return strconv.FormatBool(v.Boolean())
	case bson.TypeInt32:
		return strconv.Itoa(int(v.Int32()))
	case bson.TypeInt64:
		return strconv.FormatInt(v.Int64(), 10)
	case bson.TypeDouble:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case bson.TypeEmbeddedDocument:
		return Show(v.Document())
	}
	return fmt.Sprint(v)
}
