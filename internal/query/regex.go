package query

import (
	"errors"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/regex"
)

// compileRegex compiles a query regex ($regex, a regex literal, a
// $jsonSchema pattern) with the rules of package regex, reporting failures
// with the codes the query language uses: 51108 for an unknown option,
// BadValue for a NUL byte in the pattern (RegexMatchExpression's check; the
// aggregation operators' 51109 is theirs), 51091 for a pattern that does not
// compile and 238 for PCRE2 syntax Folio does not run.
func compileRegex(pattern, options string) (*regex.Regexp, error) {
	re, err := regex.Compile(pattern, options)
	var e *regex.Error
	if !errors.As(err, &e) {
		return re, err
	}
	switch e.Kind {
	case regex.OptionsNullByte:
		return nil, mongoerr.New(mongoerr.RegexFlagInvalid, "invalid flag in regex options: \x00")
	case regex.BadOption:
		return nil, mongoerr.New(mongoerr.RegexFlagInvalid, "invalid flag in regex options: %c", e.Option)
	case regex.NullByte:
		return nil, mongoerr.New(mongoerr.BadValue, "Regular expression cannot contain an embedded null byte")
	case regex.Unsupported:
		return nil, mongoerr.New(mongoerr.NotImplemented, "%s", e.Error())
	}
	return nil, mongoerr.New(mongoerr.RegexPatternInvalid, "Regular expression is invalid: %s", e.Err.Error())
}
