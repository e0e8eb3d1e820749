package expr

import (
	"strings"
	"time"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Scope holds the variable names visible to an expression at compile time.
// The root scope has the system variables ROOT, CURRENT, NOW and REMOVE and
// the caller's user variables; child scopes add the variables of $let,
// $map, $filter, $reduce, ... or a caller's own (aggregate's $lookup let).
// Scopes are immutable and may be shared between compilations.
type Scope struct {
	parent *Scope
	// validator marks a collection validator's expressions, where MongoDB
	// refuses $function and folds no failing constant; children inherit
	// it.
	validator bool
	// unoptimized marks expressions MongoDB parses and never optimizes
	// (an update's pipeline): a failing constant fails as it is
	// evaluated, as in a validator; children inherit it.
	unoptimized bool
	names       []string
	// slots[i] is the evaluation slot of names[i]; -1 marks a variable whose
	// value the caller supplies in Context.Vars.
	slots []int
	// consts, when set, holds the values of the caller-supplied names,
	// known as the expression compiles: a command's let variables, which
	// MongoDB binds as constants (Variables::setConstantValue), so that a
	// reference folds as a literal would (ExpressionFieldPath::optimize).
	consts map[string]bson.RawValue
	// bound is the number of slots used by this scope and its ancestors.
	bound int
	// coll is the collation comparisons follow (nil: simple); children
	// inherit it.
	coll *collation.Collator
}

// NewScope returns a root scope with the system variables and the given
// user variables (their values come from Context.Vars at evaluation).
func NewScope(userVars ...string) *Scope {
	return (*Scope)(nil).With(userVars...)
}

// With returns a child scope adding names whose values the caller supplies
// in Context.Vars at evaluation; they shadow same-named outer variables.
func (s *Scope) With(names ...string) *Scope {
	c := new(Scope)
	c.init(s, names)
	return c
}

// init makes c the child of parent (nil: a root) adding names (see With).
func (c *Scope) init(parent *Scope, names []string) {
	*c = Scope{parent: parent, names: names}
	if len(names) > 0 {
		c.slots = make([]int, len(names))
		for i := range c.slots {
			c.slots[i] = -1
		}
	}
	if parent != nil {
		c.bound, c.coll, c.validator, c.unoptimized = parent.bound, parent.coll, parent.validator, parent.unoptimized
	}
}

// Unoptimized returns a child scope for expressions MongoDB never
// optimizes, whose failing constants fail only when evaluated.
func (s *Scope) Unoptimized() *Scope {
	c := s.With()
	c.unoptimized = true
	return c
}

// InValidator returns a child scope for a collection validator's
// expressions.
func (s *Scope) InValidator() *Scope {
	c := s.With()
	c.validator = true
	return c
}

// Collated returns a child scope whose comparisons ($eq, $in, the set
// operators, $max, $sortArray...) follow coll (nil: simple), as the
// command's collation makes MongoDB's expressions compare.
func (s *Scope) Collated(coll *collation.Collator) *Scope {
	c := s.With()
	c.coll = coll
	return c
}

// Collator is the collation of s (nil: simple).
func (s *Scope) Collator() *collation.Collator {
	if s == nil {
		return nil
	}
	return s.coll
}

// bind returns a child scope whose names are bound by the expression itself
// and the slot of each name.
func (s *Scope) bind(c *compiler, names ...string) *Scope {
	child := &Scope{parent: s, names: names, slots: make([]int, len(names)), bound: s.bound, coll: s.coll}
	for i := range names {
		child.slots[i] = child.bound
		child.bound++
	}
	c.slots = max(c.slots, child.bound)
	return child
}

// slot returns the slot of the innermost binding of name in s.
func (s *Scope) slot(name string) int {
	for i := len(s.names) - 1; i >= 0; i-- {
		if s.names[i] == name {
			return s.slots[i]
		}
	}
	return -1
}

// resolve finds name: found reports whether it is in scope, slot is its
// evaluation slot or -1 for a caller-supplied variable, and the scope
// binding it.
func (s *Scope) resolve(name string) (slot int, found bool) {
	slot, _, found = s.lookup(name)
	return slot, found
}

// lookup is resolve, also returning the scope that binds name.
func (s *Scope) lookup(name string) (slot int, in *Scope, found bool) {
	for ; s != nil; s = s.parent {
		for i := len(s.names) - 1; i >= 0; i-- {
			if s.names[i] == name {
				return s.slots[i], s, true
			}
		}
	}
	return -1, nil, false
}

// ValidateVarName checks a variable name being defined ($let vars, "as",
// a command's or a stage's let), as MongoDB's
// variableValidation::isValidNameForUserWrite does: a lowercase ASCII
// letter or non-ASCII character first, then letters, digits, '_' or
// non-ASCII characters. Since 5.0 every refusal is FailedToParse.
func ValidateVarName(name string) error {
	return validateName(name, func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 0x80 })
}

// validateBindName checks the name a $let variable or an "as" binds, as
// isValidNameForUserWrite: ValidateVarName's names and CURRENT, the one
// system variable an expression may rebind (field paths then read it).
func validateBindName(name string) error {
	if name == "CURRENT" {
		return nil
	}
	return ValidateVarName(name)
}

// validateVarRef checks a variable name being referenced ("$$name"), as
// validateNameForUserRead does: as ValidateVarName, but an uppercase first
// letter (system variables) is allowed.
func validateVarRef(name string) error {
	return validateName(name, func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 })
}

// validateName checks a variable name whose first character first allows.
func validateName(name string, first func(byte) bool) error {
	if name == "" {
		return mongoerr.New(mongoerr.FailedToParse, "empty variable names are not allowed")
	}
	if !first(name[0]) {
		return mongoerr.New(mongoerr.FailedToParse, "'%s' starts with an invalid character for a user variable name", name)
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isVarChar(c) {
			return mongoerr.New(mongoerr.FailedToParse, "'%s' contains an invalid character for a variable name: '%c'", name, c)
		}
	}
	return nil
}

func isVarChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// compileVariable compiles "$$name" or "$$name.path" (given without "$$").
func (c *compiler) compileVariable(ref string, s *Scope) (*Expr, error) {
	name, rest, hasPath := strings.Cut(ref, ".")
	if err := validateVarRef(name); err != nil {
		return nil, err
	}
	var path []string
	if hasPath {
		var err error
		if path, err = SplitPath(rest); err != nil {
			return nil, err
		}
	}
	if slot, in, found := s.lookup(name); found {
		if slot >= 0 {
			return &Expr{eval: func(st *state) (bson.RawValue, error) {
				return WalkPath(st.vars[slot], path), nil
			}}, nil
		}
		if v, ok := in.consts[name]; ok {
			return constExpr(WalkPath(v, path)), nil
		}
		return &Expr{eval: func(st *state) (bson.RawValue, error) {
			return WalkPath(st.ctx.Vars[name], path), nil
		}, form: &form{variable: name, path: path}}, nil
	}
	switch name {
	case "ROOT", "CURRENT":
		c.readsDoc = true
		if hasPath {
			c.readField(rest)
		} else {
			c.wholeDoc = true
		}
		if name == "ROOT" {
			if !hasPath {
				return &Expr{eval: func(st *state) (bson.RawValue, error) { return st.root, nil }}, nil
			}
			// a path of the document as "$a" is where $$CURRENT is
			// $$ROOT (MongoDB gives both the one variable id, kRootId,
			// so RewriteExpr takes "$$ROOT.a"); no parts, which EvalAt
			// would read from $$CURRENT
			return &Expr{
				eval:   func(st *state) (bson.RawValue, error) { return WalkPath(st.root, path), nil },
				path:   rest,
				isPath: true,
			}, nil
		}
		if !hasPath {
			return &Expr{eval: func(st *state) (bson.RawValue, error) { return st.cur, nil }}, nil
		}
		return &Expr{
			eval:   func(st *state) (bson.RawValue, error) { return WalkPath(st.cur, path), nil },
			path:   rest,
			isPath: true,
			parts:  path,
		}, nil
	case "REMOVE":
		return &Expr{eval: func(*state) (bson.RawValue, error) { return missing, nil }}, nil
	case "NOW":
		return &Expr{eval: func(st *state) (bson.RawValue, error) {
			now := st.ctx.Now
			if now.IsZero() {
				now = time.Now()
			}
			return WalkPath(dateValue(now.UnixMilli()), path), nil
		}}, nil
	case "CLUSTER_TIME":
		return &Expr{eval: func(st *state) (bson.RawValue, error) {
			if st.ctx.ClusterTime.Type == 0 {
				return missing, mongoerr.New(mongoerr.BuiltinVariableUnavailable, "Builtin variable '$$CLUSTER_TIME' is not available")
			}
			return WalkPath(st.ctx.ClusterTime, path), nil
		}}, nil
	case "USER_ROLES":
		return &Expr{eval: func(st *state) (bson.RawValue, error) {
			if st.ctx.UserRoles.Type == 0 {
				return WalkPath(arrayValue(nil), path), nil
			}
			return WalkPath(st.ctx.UserRoles, path), nil
		}}, nil
	case "JS_SCOPE", "IS_MR":
		// MongoDB's builtins of its mapReduce, which Folio runs without
		// them: a reference parses, and fails when evaluated, as one
		// without a value does in Variables::getValue.
		return &Expr{eval: func(st *state) (bson.RawValue, error) {
			return missing, mongoerr.New(mongoerr.BuiltinVariableUnavailable, "Builtin variable '$$%s' is not available", name)
		}}, nil
	}
	return nil, mongoerr.New(mongoerr.UndefinedVariable, "Use of undefined variable: %s", name)
}

func init() {
	register(map[string]opCompiler{
		"$let":     compileLet,
		"$literal": compileLiteral,
		"$const":   compileLiteral,
	})
}

// compileLiteral: {$literal: v} is v, unparsed. $const is its other name
// (MongoDB's own: it serializes constants as $const).
func compileLiteral(_ *compiler, _ string, v bson.RawValue, _ *Scope) (*Expr, error) {
	return constExpr(v), nil
}

// compileLet: {$let: {vars: {name: expr, ...}, in: expr}}. The vars are
// evaluated in the outer scope, then "in" with them bound.
func compileLet(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.LetSpecNotObject, "$let only supports an object as its argument")
	}
	args, err := namedArgs(name, v, mongoerr.LetSpecNotObject, mongoerr.LetUnknownArgument, "vars", "in")
	if err != nil {
		return nil, err
	}
	varsDoc, ok := args["vars"]
	if !ok {
		return nil, mongoerr.New(mongoerr.LetMissingVars, "Missing 'vars' parameter to $let")
	}
	inArg, ok := args["in"]
	if !ok {
		return nil, mongoerr.New(mongoerr.LetMissingIn, "Missing 'in' parameter to $let")
	}
	if varsDoc.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.ExpectedObject("vars")
	}
	var names []string
	var inits []*Expr
	it := rawdoc.Iterate(varsDoc.Value)
	for {
		kb, ev, ok := it.Next()
		if !ok {
			break
		}
		k := string(kb)
		if err := validateBindName(k); err != nil {
			return nil, err
		}
		e, err := c.compile(ev, s)
		if err != nil {
			return nil, err
		}
		names = append(names, k)
		inits = append(inits, e)
	}
	inner := s.bind(c, names...)
	body, err := c.compile(inArg, inner)
	if err != nil {
		return nil, err
	}
	slots := make([]int, len(names))
	for i, n := range names {
		slots[i] = inner.slot(n)
	}
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		for i, e := range inits {
			v, err := e.eval(st)
			if err != nil {
				return missing, err
			}
			st.vars[slots[i]] = v
		}
		return body.eval(st)
	}}, nil
}
