package js

import (
	"context"

	"github.com/dop251/goja"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// StoredLoader reads the documents of a database's system.js collection,
// its stored JavaScript.
type StoredLoader func(ctx context.Context, db string) ([]bson.Raw, error)

// storedScripts is one read of a database's system.js: each entry's name
// (its _id) and value.
type storedScripts struct {
	names  []string
	values []bson.RawValue
}

// LoadStored reads op's database's system.js once for the operation, as
// MongoDB's Scope::loadStored does when $where or mapReduce takes its
// scope: every entry needs a string _id (10209) and a value (10210) that
// is not code with scope (4546000). The sessions op opens afterwards
// define each entry as a global (code as a function) and drop the globals
// of entries removed since their VM last loaded them. Only $where and
// mapReduce load them; $function and $accumulator do not, as in MongoDB.
func (op *Op) LoadStored() error {
	if !op.Enabled() || op.Engine.stored == nil || op.DB == "" || op.stored != nil {
		return nil
	}
	docs, err := op.Engine.stored(op.context(), op.DB)
	if err != nil {
		return err
	}
	set := &storedScripts{}
	for _, d := range docs {
		id := d.Lookup("_id")
		if id.Type != bson.TypeString {
			return mongoerr.New(mongoerr.StoredScriptName, "name has to be a string: %s", values.ShellElement("_id", id))
		}
		val, err := d.LookupErr("value")
		if err != nil {
			return mongoerr.New(mongoerr.StoredScriptNoValue, "value has to be set")
		}
		if val.Type == bson.TypeCodeWithScope {
			return mongoerr.New(mongoerr.StoredScriptCodeWithScope, "BSON type 'CodeWithScope' not supported in system.js scripts. As an alternative use 'Code'. Script _id value: '%s'", id.StringValue())
		}
		set.names = append(set.names, id.StringValue())
		set.values = append(set.values, val)
	}
	op.stored = set
	return nil
}

// applyStored makes v's globals op's stored scripts: the previous load's
// names that are gone are deleted, the others (re)defined. An entry that
// cannot be defined (code that does not compile) is left out, as MongoDB
// logs and skips it. A nil set (an operation that loads none: $function,
// $accumulator) removes those a previous operation defined.
func (v *vm) applyStored(set *storedScripts) {
	if v.stored == set {
		return
	}
	var keep map[string]bool
	if set != nil {
		keep = make(map[string]bool, len(set.names))
		for _, n := range set.names {
			keep[n] = true
		}
	}
	g := v.rt.GlobalObject()
	for n := range v.storedNames {
		if !keep[n] {
			_ = g.Delete(n)
		}
	}
	if set == nil {
		v.stored, v.storedNames = nil, nil
		return
	}
	for i, n := range set.names {
		val, err := v.storedValue(set.values[i])
		if err != nil {
			delete(keep, n)
			continue
		}
		_ = g.Set(n, val)
	}
	v.stored, v.storedNames = set, keep
}

// storedValue converts a stored entry, recovering from the conversion's
// panic on code that does not compile.
func (v *vm) storedValue(raw bson.RawValue) (val goja.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = mongoerr.New(mongoerr.JSInterpreterFailure, "%v", r)
		}
	}()
	return v.toJS(raw), nil
}
