package expr

import (
	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(map[string]opCompiler{
		"$eq":  comparison(func(c int) bool { return c == 0 }),
		"$ne":  comparison(func(c int) bool { return c != 0 }),
		"$gt":  comparison(func(c int) bool { return c > 0 }),
		"$gte": comparison(func(c int) bool { return c >= 0 }),
		"$lt":  comparison(func(c int) bool { return c < 0 }),
		"$lte": comparison(func(c int) bool { return c <= 0 }),
		"$cmp": collated(func(coll *collation.Collator) opCompiler {
			return binary(func(a, b bson.RawValue) (bson.RawValue, error) {
				return values.Int32Value(int32(sign(coll.Compare(a, b)))), nil
			})
		}),
		"$and":    compileAndOr(false),
		"$or":     compileAndOr(true),
		"$not":    unary(func(a bson.RawValue) (bson.RawValue, error) { return boolValue(!values.Truthy(a)), nil }),
		"$cond":   compileCond,
		"$ifNull": compileIfNull,
		"$switch": compileSwitch,
	})
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// comparison builds $eq, $ne, $gt, $gte, $lt and $lte: two operands compared
// in MongoDB's total order over all types (missing sorts before null, values
// of different types compare by type), strings by the scope's collation, so
// no operand is an error. A comparison that does not fold keeps its
// operator and operands for Rewrite.
func comparison(test func(int) bool) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.operandList(name, v, s, 2, 2)
		if err != nil {
			return nil, err
		}
		coll := s.Collator()
		e, err := c.foldBinary(args, func(a, b bson.RawValue) (bson.RawValue, error) {
			return boolValue(test(coll.Compare(a, b))), nil
		})
		if err == nil && !e.constant {
			e.form = &form{op: name, args: args}
		}
		return e, err
	}
}

// collated builds an operator whose evaluation compares values under the
// collation of the scope it is compiled in.
func collated(build func(coll *collation.Collator) opCompiler) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		return build(s.Collator())(c, name, v, s)
	}
}

// equal reports whether a and b are equal under coll (nil: simple).
func equal(coll *collation.Collator, a, b bson.RawValue) bool {
	if coll == nil {
		return values.Equal(a, b)
	}
	return coll.Compare(a, b) == 0
}

// compileAndOr builds $and (true unless an operand is falsy; true for no
// operands) and $or (true when an operand is truthy), evaluating operands
// left to right and stopping at the first that decides the result.
func compileAndOr(isOr bool) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.argList(v, s)
		if err != nil {
			return nil, err
		}
		e, err := c.fold(args, func(st *state) (bson.RawValue, error) {
			for _, a := range args {
				x, err := a.eval(st)
				if err != nil {
					return missing, err
				}
				if values.Truthy(x) == isOr {
					return boolValue(isOr), nil
				}
			}
			return boolValue(!isOr), nil
		})
		if err == nil && !e.constant {
			e.form = &form{op: name, args: args}
		}
		return e, err
	}
}

// compileCond builds $cond: [if, then, else] or {if, then, else}; only the
// chosen branch is evaluated.
func compileCond(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	var parts [3]bson.RawValue
	if v.Type == bson.TypeEmbeddedDocument {
		args, err := namedArgs(name, v, mongoerr.CondUnknownArgument, mongoerr.CondUnknownArgument, "if", "then", "else")
		if err != nil {
			return nil, err
		}
		missingCodes := [3]mongoerr.Code{mongoerr.CondMissingIf, mongoerr.CondMissingThen, mongoerr.CondMissingElse}
		for i, k := range []string{"if", "then", "else"} {
			p, ok := args[k]
			if !ok {
				return nil, mongoerr.New(missingCodes[i], "Missing '%s' parameter to $cond", k)
			}
			parts[i] = p
		}
	} else {
		var list []bson.RawValue
		if v.Type == bson.TypeArray {
			list = elems(v)
		} else {
			list = []bson.RawValue{v}
		}
		if err := arity(name, len(list), 3, 3); err != nil {
			return nil, err
		}
		copy(parts[:], list)
	}
	var args [3]*Expr
	for i, p := range parts {
		e, err := c.compile(p, s)
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	return c.fold(args[:], func(st *state) (bson.RawValue, error) {
		cond, err := args[0].eval(st)
		if err != nil {
			return missing, err
		}
		if values.Truthy(cond) {
			return args[1].eval(st)
		}
		return args[2].eval(st)
	})
}

// compileIfNull builds $ifNull: the first operand that is not null, missing
// or undefined; otherwise the last operand's value, whatever it is.
func compileIfNull(c *compiler, _ string, v bson.RawValue, s *Scope) (*Expr, error) {
	args, err := c.argList(v, s)
	if err != nil {
		return nil, err
	}
	if len(args) < 2 {
		return nil, mongoerr.New(mongoerr.IfNullTooFewArguments, "$ifNull needs at least two arguments, had: %d", len(args))
	}
	return c.fold(args, func(st *state) (bson.RawValue, error) {
		for _, a := range args[:len(args)-1] {
			x, err := a.eval(st)
			if err != nil {
				return missing, err
			}
			if !isNullish(x) {
				return x, nil
			}
		}
		return args[len(args)-1].eval(st)
	})
}

// compileSwitch builds $switch: {branches: [{case, then}, ...], default}.
// The first branch whose case is truthy gives the result; with no such
// branch the default does, and without a default it is error 40066.
func compileSwitch(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.SwitchSpecNotObject, "$switch requires an object as an argument, found: %s", typeName(v))
	}
	var cases, thens []*Expr
	var def *Expr
	it := rawdoc.Iterate(v.Value)
	for {
		k, ev, ok := it.Next()
		if !ok {
			break
		}
		switch string(k) {
		case "branches":
			if ev.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.SwitchBranchesNotArray, "$switch expected an array for 'branches', found: %s", typeName(ev))
			}
			// MongoDB's optimize drops a branch whose case is constant
			// and false, and every branch after one whose case is
			// constant and true, without folding them: their constant
			// errors do not fail the command (see fold), their syntax
			// errors do.
			decided := false
			for _, b := range elems(ev) {
				if b.Type != bson.TypeEmbeddedDocument {
					return nil, mongoerr.New(mongoerr.SwitchBranchNotObject, "$switch expected each branch to be an object, found: %s", typeName(b))
				}
				var cs, th *Expr
				var then bson.RawValue
				bi := rawdoc.Iterate(b.Value)
				for {
					bk, bv, ok := bi.Next()
					if !ok {
						break
					}
					key := string(bk)
					if key != "case" && key != "then" {
						return nil, mongoerr.New(mongoerr.SwitchBranchUnknownArgument, "$switch found an unknown argument to a branch: %s", key)
					}
					e, err := c.compileDeferringFolds(bv, s, decided || key == "then")
					if err != nil {
						return nil, err
					}
					if key == "case" {
						cs = e
					} else {
						th, then = e, bv
					}
				}
				if cs == nil {
					return nil, mongoerr.New(mongoerr.SwitchBranchMissingCase, "$switch requires each branch have a 'case' expression")
				}
				if th == nil {
					return nil, mongoerr.New(mongoerr.SwitchBranchMissingThen, "$switch requires each branch have a 'then' expression.")
				}
				if !decided && (!cs.constant || values.Truthy(cs.value)) {
					var err error
					if th, err = c.compile(then, s); err != nil {
						return nil, err
					}
				}
				decided = decided || cs.constant && values.Truthy(cs.value)
				cases, thens = append(cases, cs), append(thens, th)
			}
		case "default":
			e, err := c.compile(ev, s)
			if err != nil {
				return nil, err
			}
			def = e
		default:
			return nil, mongoerr.New(mongoerr.SwitchUnknownArgument, "$switch found an unknown argument: %s", string(k))
		}
	}
	if len(cases) == 0 {
		return nil, mongoerr.New(mongoerr.SwitchNoBranches, "$switch requires at least one branch.")
	}
	all := append(append([]*Expr{}, cases...), thens...)
	if def != nil {
		all = append(all, def)
	}
	return c.fold(all, func(st *state) (bson.RawValue, error) {
		for i, cs := range cases {
			x, err := cs.eval(st)
			if err != nil {
				return missing, err
			}
			if values.Truthy(x) {
				return thens[i].eval(st)
			}
		}
		if def == nil {
			return missing, mongoerr.New(mongoerr.SwitchNoMatchingBranch, "$switch could not find a matching branch for an input, and no default was specified.")
		}
		return def.eval(st)
	})
}
