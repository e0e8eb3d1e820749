package update

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// renameOp is $rename, placed in the tree at the destination path (the
// source holds a noopOp so that other operators on it conflict). It moves
// the source value to the destination and removes the source; a missing
// source is a no-op. Neither path may go through an array.
type renameOp struct {
	from []string
}

// compileRename validates {$rename: {from: to}} as MongoDB's RenameNode.
func (u *Update) compileRename(from string, v bson.RawValue, used map[string]bool) error {
	fromParts, err := parsePath(from, u.filters, used)
	if err != nil {
		return err
	}
	if err := u.root.insert(fromParts, noopOp{}); err != nil {
		return err
	}
	to, ok := v.StringValueOK()
	if !ok {
		return mongoerr.New(mongoerr.BadValue, "The 'to' field for $rename must be a string: %s", values.ShellElement(from, v))
	}
	toParts, err := parsePath(to, u.filters, used)
	if err != nil {
		return err
	}
	switch {
	case strings.ContainsRune(to, 0):
		return mongoerr.New(mongoerr.BadValue, "The 'to' field for $rename cannot contain an embedded null byte")
	case from == to:
		return mongoerr.New(mongoerr.BadValue, "The source and target field for $rename must differ: %s",
			values.ShellElement(from, v))
	case isPrefix(fromParts, toParts) || isPrefix(toParts, fromParts):
		return mongoerr.New(mongoerr.BadValue, "The source and target field for $rename must not be on the same path: %s",
			values.ShellElement(from, v))
	case isDynamic(fromParts):
		return mongoerr.New(mongoerr.BadValue, "The source field for $rename may not be dynamic: %s", from)
	case isDynamic(toParts):
		return mongoerr.New(mongoerr.BadValue, "The destination field for $rename may not be dynamic: %s", to)
	}
	return u.root.insert(toParts, renameOp{from: fromParts})
}

func isPrefix(a, b []string) bool {
	return len(a) <= len(b) && slices.Equal(a, b[:len(a)])
}

func (o renameOp) apply(c *applyCtx, s *slot) error {
	src, err := c.findSource(o.from)
	if err != nil || src == nil {
		return err
	}
	for p := src.parent; p.parent != nil; p = p.parent {
		if p.n.t == bson.TypeArray {
			return mongoerr.New(mongoerr.BadValue,
				"The source field cannot be an array element, '%s' in doc with %s has an array field called '%s'",
				strings.Join(o.from, "."), c.idOrNone(), p.name)
		}
	}
	for p := s.parent; p.parent != nil; p = p.parent {
		if p.n != nil && p.n.t == bson.TypeArray {
			return mongoerr.New(mongoerr.BadValue,
				"The destination field cannot be an array element, '%s' in doc with %s has an array field called '%s'",
				s.path(), c.idOrNone(), p.name)
		}
	}
	if err := c.set(s, rawNode(src.n.value()), true); err != nil {
		return err
	}
	if o.from[0] == "_id" {
		return mongoerr.New(mongoerr.ImmutableField,
			"Unsetting the path '%s' using $rename would modify the immutable field '_id'", strings.Join(o.from, "."))
	}
	return c.remove(src)
}

func (c *applyCtx) idOrNone() string {
	if id := c.idString(); id != "" {
		return id
	}
	return "no id"
}

// findSource locates the $rename source. It returns nil when the path does
// not exist and PathNotViable when it runs through a scalar or names a field
// of an array.
func (c *applyCtx) findSource(parts []string) (*slot, error) {
	s := &slot{n: c.root}
	for i, p := range parts {
		if i > 0 {
			_, numeric := arrayIndex(p)
			if !isContainer(s.n.t) || (s.n.t == bson.TypeArray && !numeric) {
				return nil, mongoerr.New(mongoerr.PathNotViable,
					"cannot use the part (%s of %s) to traverse the element ({%s})",
					parts[i-1], strings.Join(parts, "."), values.ShellElement(s.name, s.n.value()))
			}
		}
		s = &slot{parent: s, name: p, n: s.n.lookup(p)}
		if s.n == nil {
			return nil, nil
		}
	}
	return s, nil
}
