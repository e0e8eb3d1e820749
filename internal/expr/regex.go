package expr

import (
	"errors"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/regex"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(map[string]opCompiler{
		"$regexMatch":   compileRegexOp(regexMatch),
		"$regexFind":    compileRegexOp(regexFind),
		"$regexFindAll": compileRegexOp(regexFindAll),
		"$replaceOne":   compileReplace(false),
		"$replaceAll":   compileReplace(true),
	})
}

type regexKind int

const (
	regexMatch regexKind = iota
	regexFind
	regexFindAll
)

// compileRegexOp builds $regexMatch, $regexFind and $regexFindAll:
// {input, regex, options}. A null or missing input or regex gives false,
// null and [] respectively. A constant regex is compiled once.
func compileRegexOp(kind regexKind) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		if v.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(mongoerr.RegexSpecNotObject, "%s expects an object of named arguments but found: %s", name, typeName(v))
		}
		args, err := namedArgs(name, v, mongoerr.RegexSpecNotObject, mongoerr.RegexUnknownArgument, "input", "regex", "options")
		if err != nil {
			return nil, err
		}
		if _, ok := args["input"]; !ok {
			return nil, mongoerr.New(mongoerr.RegexMissingInput, "%s requires 'input' parameter", name)
		}
		if _, ok := args["regex"]; !ok {
			return nil, mongoerr.New(mongoerr.RegexMissingRegex, "%s requires 'regex' parameter", name)
		}
		var input, rx, opts *Expr
		for k, p := range map[string]**Expr{"input": &input, "regex": &rx, "options": &opts} {
			a, ok := args[k]
			if !ok {
				*p = constExpr(missing)
				continue
			}
			if *p, err = c.compile(a, s); err != nil {
				return nil, err
			}
		}
		var fixed *regex.Regexp
		if rx.constant && opts.constant {
			if fixed, err = evalRegex(name, rx.value, opts.value); err != nil {
				return nil, err
			}
		}
		return c.fold([]*Expr{input, rx, opts}, func(st *state) (bson.RawValue, error) {
			iv, err := input.eval(st)
			if err != nil {
				return missing, err
			}
			re := fixed
			if re == nil {
				rv, err := rx.eval(st)
				if err != nil {
					return missing, err
				}
				ov, err := opts.eval(st)
				if err != nil {
					return missing, err
				}
				if re, err = evalRegex(name, rv, ov); err != nil {
					return missing, err
				}
			}
			var subject string
			if !isNullish(iv) {
				var ok bool
				if subject, ok = iv.StringValueOK(); !ok {
					return missing, mongoerr.New(mongoerr.RegexInputNotString, "%s needs 'input' to be of type string", name)
				}
			}
			return applyRegex(kind, name, re, subject, re == nil || isNullish(iv))
		})
	}
}

// evalRegex compiles the regex and options operands; a nil result (no error)
// means the regex is null or missing.
func evalRegex(op string, rv, ov bson.RawValue) (*regex.Regexp, error) {
	var pattern, flags string
	switch rv.Type {
	case bson.TypeString:
		pattern, _ = str(rv)
	case bson.TypeRegex:
		pattern, flags = rv.Regex()
	case 0, bson.TypeNull, bson.TypeUndefined:
	default:
		return nil, mongoerr.New(mongoerr.RegexRegexInvalidType, "%s needs 'regex' to be of type string or regex", op)
	}
	if !isNullish(ov) {
		o, ok := ov.StringValueOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.RegexOptionsNotString, "%s needs 'options' to be of type string", op)
		}
		if flags != "" {
			// Even options "" conflict with a regex's own flags.
			return nil, mongoerr.New(mongoerr.RegexOptionsInBoth, "%s: found regex option(s) specified in both 'regex' and 'option' fields", op)
		}
		flags = o
	}
	if isNullish(rv) {
		return nil, nil
	}
	return compileRegex(op, pattern, flags)
}

// applyRegex computes the result for subject; null marks a null or missing
// input or regex. A match past the engine's bounds fails with 51156, as
// PCRE2's match limit does in MongoDB.
func applyRegex(kind regexKind, op string, re *regex.Regexp, subject string, null bool) (bson.RawValue, error) {
	failed := func(err error) error {
		return mongoerr.New(mongoerr.RegexExecutionFailed, "Error occurred while executing the regular expression in %s. Result code: %v", op, err)
	}
	switch kind {
	case regexMatch:
		if null {
			return boolValue(false), nil
		}
		ok, err := re.MatchString(subject)
		if err != nil {
			return missing, failed(err)
		}
		return boolValue(ok), nil
	case regexFind:
		if null {
			return nullValue, nil
		}
		found := nullValue
		if err := re.FindAll(subject, 1, func(f regex.Found) bool {
			found = matchDoc(f)
			return false
		}); err != nil {
			return missing, failed(err)
		}
		return found, nil
	}
	if null {
		return arrayValue(nil), nil
	}
	// The matches are found at most as many as can fit in the output's
	// bound, each match document taking 36 bytes and 3 per capture at the
	// least.
	limit := maxRegexFindAllOutput/(36+3*re.Captures()) + 1
	var out []bson.RawValue
	size := 0
	var tooLarge error
	if err := re.FindAll(subject, limit, func(f regex.Found) bool {
		d := matchDoc(f)
		if size += len(d.Value); size > maxRegexFindAllOutput {
			tooLarge = mongoerr.New(mongoerr.RegexFindAllTooLarge, "$regexFindAll: the size of buffer to store output exceeded the 64MB limit")
			return false
		}
		out = append(out, d)
		return true
	}); err != nil {
		return missing, failed(err)
	}
	if tooLarge != nil {
		return missing, tooLarge
	}
	return arrayValue(out), nil
}

// maxRegexFindAllOutput bounds the size of $regexFindAll's match
// documents, as MongoDB bounds them (its BufferMaxSize).
const maxRegexFindAllOutput = 64 << 20

// matchDoc is {match, idx, captures}: idx counts code points up to the
// match; an unmatched group captures null.
func matchDoc(f regex.Found) bson.RawValue {
	var d docBuilder
	d.set("match", stringValue(f.Match))
	d.set("idx", intValue(int64(f.Index)))
	caps := make([]bson.RawValue, len(f.Captures))
	for i, c := range f.Captures {
		caps[i] = nullValue
		if c != nil {
			caps[i] = stringValue(*c)
		}
	}
	d.set("captures", arrayValue(caps))
	return d.value()
}

// compileRegex compiles the regex of the aggregation operator op with the
// rules of package regex, reporting failures with the codes the operators
// use: 51108 for an unknown option, 51109 for a NUL byte in the pattern,
// 51110 in the options, 51111 for a
// pattern that does not compile and 238 for PCRE2 syntax Folio does not run.
func compileRegex(op, pattern, options string) (*regex.Regexp, error) {
	re, err := regex.Compile(pattern, options)
	var e *regex.Error
	if !errors.As(err, &e) {
		return re, err
	}
	switch e.Kind {
	case regex.BadOption:
		return nil, mongoerr.New(mongoerr.RegexFlagInvalid, "%s invalid flag in regex options: %c", op, e.Option)
	case regex.NullByte:
		return nil, mongoerr.New(mongoerr.RegexEmbeddedNull, "%s: regular expression cannot contain an embedded null byte", op)
	case regex.OptionsNullByte:
		return nil, mongoerr.New(mongoerr.RegexOptionsEmbeddedNull, "%s: regular expression options cannot contain an embedded null byte", op)
	case regex.Unsupported:
		return nil, mongoerr.New(mongoerr.NotImplemented, "%s", e.Error())
	}
	return nil, mongoerr.New(mongoerr.RegexInvalid, "Invalid Regex in %s: %s", op, e.Err.Error())
}

// compileReplace builds $replaceOne and $replaceAll: {input, find,
// replacement}, all strings; any of them null or missing gives null.
func compileReplace(all bool) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		if v.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(mongoerr.ReplaceSpecNotObject, "%s requires an object as an argument, found: %s", name, typeName(v))
		}
		args, err := namedArgs(name, v, mongoerr.ReplaceSpecNotObject, mongoerr.ReplaceUnknownArgument, "input", "find", "replacement")
		if err != nil {
			return nil, err
		}
		codes := map[string]mongoerr.Code{"input": mongoerr.ReplaceMissingInput, "find": mongoerr.ReplaceMissingFind, "replacement": mongoerr.ReplaceMissingReplacement}
		typeCodes := map[string]mongoerr.Code{"input": mongoerr.ReplaceInputNotString, "find": mongoerr.ReplaceFindNotString, "replacement": mongoerr.ReplaceReplacementNotString}
		var parts [3]*Expr
		for i, k := range []string{"input", "find", "replacement"} {
			a, ok := args[k]
			if !ok {
				return nil, mongoerr.New(codes[k], "%s requires '%s' to be specified", name, k)
			}
			if parts[i], err = c.compile(a, s); err != nil {
				return nil, err
			}
		}
		return c.fold(parts[:], func(st *state) (bson.RawValue, error) {
			var strs [3]string
			null := false
			for i, k := range []string{"input", "find", "replacement"} {
				pv, err := parts[i].eval(st)
				if err != nil {
					return missing, err
				}
				if isNullish(pv) {
					null = true
					continue
				}
				sv, ok := pv.StringValueOK()
				if !ok {
					return missing, mongoerr.New(typeCodes[k], "%s requires that '%s' be a string, found: %s", name, k, values.ValueString(pv))
				}
				strs[i] = sv
			}
			if null {
				return nullValue, nil
			}
			n := 1
			if all {
				n = -1
			}
			out, err := replaceBounded(strs[0], strs[1], strs[2], n)
			if err != nil {
				return missing, err
			}
			return stringValue(out), nil
		})
	}
}
