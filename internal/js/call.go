package js

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
)

// Interrupt causes: the operation's context ended, or the script passed
// its memory limit.
var (
	errContextDone = errors.New("operation interrupted")
	errOutOfMemory = errors.New("out of memory")
)

// Session holds one VM for a sequence of calls of one operation (a
// mapReduce, a group's $accumulator); Close returns it.
type Session struct {
	op   *Op
	v    *vm
	stop func() bool
	// broken marks a VM that must not return to the pool.
	broken bool
}

// Session takes a VM for op. Callers check op.Enabled first.
func (op *Op) Session() *Session {
	v := op.Engine.get(op.Pool)
	v.ctx = op.context()
	v.applyStored(op.stored)
	s := &Session{op: op, v: v, stop: func() bool { return true }}
	if ctx := op.context(); ctx.Done() != nil {
		s.stop = context.AfterFunc(ctx, func() { v.rt.Interrupt(errContextDone) })
	}
	return s
}

// Close gives the VM back.
func (s *Session) Close() {
	if s.v == nil {
		return
	}
	if !s.stop() {
		// The interrupt may still be landing: the VM is not reused.
		s.broken = true
	}
	s.v.rt.ClearInterrupt()
	s.op.Engine.put(s.op.Pool, s.v, !s.broken)
	s.v = nil
}

// Call calls f with this bound to thisDoc (nil: an empty object) and args
// converted to JavaScript; its result is converted back to BSON.
func (s *Session) Call(f *Func, thisDoc bson.Raw, args ...bson.RawValue) (bson.RawValue, error) {
	var out bson.RawValue
	err := s.run(func(v *vm) error {
		res, err := s.invoke(f, thisDoc, args)
		if err != nil {
			return err
		}
		out, err = v.toBSON(res)
		var me *mongoerr.Error
		if err != nil && !errors.As(err, &me) {
			return mongoerr.New(mongoerr.JSInterpreterFailure, "%v", err)
		}
		return err
	})
	return out, err
}

// Test calls f as $where does: this and the global obj are doc, and the
// global fullObject is true, as MongoDB's $where scope sets them; the
// result's truth as JavaScript has it.
func (s *Session) Test(f *Func, doc bson.Raw) (bool, error) {
	var ok bool
	err := s.run(func(v *vm) error {
		this := v.rootToJS(doc)
		_ = v.rt.Set("obj", this)
		_ = v.rt.Set("fullObject", true)
		c, err := v.function(f)
		if err != nil {
			return err
		}
		res, err := c(this)
		if err != nil {
			return err
		}
		ok = res.ToBoolean()
		return nil
	})
	return ok, err
}

// Map calls the map function with this bound to doc and emit routed to
// emit; keys and values arrive as BSON. As MongoDB's emit: it takes
// exactly two arguments (31220), and an undefined key is null.
func (s *Session) Map(f *Func, doc bson.Raw, emit func(key, value bson.RawValue) error) error {
	var emitErr error
	s.v.emit = func(args []goja.Value) {
		if emitErr != nil {
			return
		}
		var kb bson.RawValue
		var err error
		switch {
		case len(args) != 2:
			err = mongoerr.New(mongoerr.MapReduceEmitArgs, "emit takes 2 args")
		case goja.IsUndefined(args[0]):
			kb = bson.RawValue{Type: bson.TypeNull}
		default:
			kb, err = s.v.toBSON(args[0])
		}
		val := goja.Undefined()
		if len(args) > 1 {
			val = args[1]
		}
		if err == nil {
			var vb bson.RawValue
			if vb, err = s.v.toBSON(val); err == nil {
				err = emit(kb, vb)
			}
		}
		if err != nil {
			emitErr = err
			panic(s.v.rt.NewGoError(err))
		}
	}
	defer func() { s.v.emit = nil }()
	if !s.v.emitSet {
		_ = s.v.rt.Set("emit", s.v.emitFn)
		s.v.emitSet = true
	}
	err := s.run(func(v *vm) error {
		c, err := v.function(f)
		if err != nil {
			return err
		}
		_, err = c(v.rootToJS(doc))
		return err
	})
	var me *mongoerr.Error
	if emitErr != nil && errors.As(emitErr, &me) {
		return me
	}
	return err
}

func (s *Session) invoke(f *Func, thisDoc bson.Raw, args []bson.RawValue) (goja.Value, error) {
	v := s.v
	c, err := v.function(f)
	if err != nil {
		return nil, err
	}
	var this goja.Value
	if thisDoc != nil {
		this = v.rootToJS(thisDoc)
	} else {
		this = v.rt.NewObject()
	}
	jsArgs := make([]goja.Value, len(args))
	for i, a := range args {
		jsArgs[i] = v.toJS(a)
	}
	return c(this, jsArgs...)
}

// run runs one call under the memory account and maps its failure to
// MongoDB's error.
func (s *Session) run(f func(v *vm) error) (err error) {
	if s.v == nil {
		return mongoerr.New(mongoerr.InternalError, "script session closed")
	}
	acct := s.op.Engine.mem.start(s.v, s.op.Engine.memLimit)
	defer func() {
		s.op.Engine.mem.end(acct)
		if r := recover(); r != nil {
			s.broken = true
			err = mongoerr.New(mongoerr.JSInterpreterFailure, "%v", r)
			return
		}
		if err != nil {
			err = s.failure(err, acct)
		}
	}()
	if err := f(s.v); err != nil {
		return err
	}
	// A script that finished as its operation ended (a sleep cut short)
	// fails as the operation does.
	return mongoerr.Interruption(s.op.context())
}

// failure is err as MongoDB reports it: an interrupted script fails with
// its operation's interruption (MaxTimeMSExpired, Interrupted...), one
// past its memory limit with JSInterpreterFailure "Out of memory", and a
// thrown error with JSInterpreterFailure "<Error>: <message> :\n<stack>".
func (s *Session) failure(err error, acct *account) error {
	var me *mongoerr.Error
	if errors.As(err, &me) {
		return me
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) || acct.exceeded.Load() {
		s.broken = true
		if acct.exceeded.Load() || ie.Value() == errOutOfMemory {
			return mongoerr.New(mongoerr.JSInterpreterFailure, "Out of memory")
		}
		if e := mongoerr.Interruption(s.op.context()); e != nil {
			return e
		}
		return mongoerr.New(mongoerr.Interrupted, "operation was interrupted")
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		s.broken = true
		return mongoerr.New(mongoerr.JSInterpreterFailure, "InternalError: too much recursion :\n%s", stack(so.Stack()))
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return mongoerr.New(mongoerr.JSInterpreterFailure, "%s :\n%s", thrown(ex.Value()), stack(ex.Stack()))
	}
	return mongoerr.New(mongoerr.JSInterpreterFailure, "%v", err)
}

// thrown is what a thrown value says: "Name: message" for an Error.
func thrown(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		if m := o.Get("message"); m != nil && !goja.IsUndefined(m) {
			name := "Error"
			if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
				name = n.String()
			}
			return name + ": " + m.String()
		}
	}
	if v == nil {
		return "undefined"
	}
	return v.String()
}

func stack(frames []goja.StackFrame) string {
	var b strings.Builder
	for _, f := range frames {
		p := f.Position()
		name := f.FuncName()
		if name == "<anonymous>" {
			name = ""
		}
		fmt.Fprintf(&b, "%s@:%d:%d\n", name, p.Line, p.Column)
	}
	return b.String()
}

// Call runs f once in a pooled VM (see Session.Call).
func (op *Op) Call(f *Func, thisDoc bson.Raw, args ...bson.RawValue) (bson.RawValue, error) {
	s := op.Session()
	defer s.Close()
	return s.Call(f, thisDoc, args...)
}

// Test runs a $where function on doc in a pooled VM (see Session.Test).
func (op *Op) Test(f *Func, doc bson.Raw) (bool, error) {
	s := op.Session()
	defer s.Close()
	return s.Test(f, doc)
}

// ReduceBatchBytes is the most bytes of the key and values one reduce
// call receives (BSONObjMaxUserSize).
const ReduceBatchBytes = 16 << 20

// Reduce reduces key's values as MongoDB's $_internalJsReduce does
// (AccumulatorInternalJsReduce::getValue): reduce(key, values) is called
// even for one value; the values go to it last first, as many as fit in
// ReduceBatchBytes with the key, and while some are left the result
// joins them at the end for the next call. A batch that holds one value
// or none before the next would pass the limit fails with 31392, as no
// call could make progress.
func (s *Session) Reduce(f *Func, key bson.RawValue, vals []bson.RawValue) (bson.RawValue, error) {
	for {
		arr := bsoncore.NewArrayBuilder()
		left, size := len(vals), 0
		for ; left > 0; left-- {
			v := vals[left-1]
			if size+len(key.Value)+len(v.Value) > ReduceBatchBytes {
				if len(vals)-left <= 1 {
					return bson.RawValue{}, mongoerr.New(mongoerr.ReduceValueTooLarge, "Value too large to reduce")
				}
				break
			}
			size += len(v.Value)
			arr.AppendValue(bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
		res, err := s.Call(f, nil, key, bson.RawValue{Type: bson.TypeArray, Value: arr.Build()})
		if err != nil || left == 0 {
			return res, err
		}
		vals = append(vals[:left:left], res)
	}
}

// SetGlobals defines each field of scope as a global variable of the
// session's VM (mapReduce's scope); the VM is then not reused.
func (s *Session) SetGlobals(scope bson.Raw) error {
	s.broken = true
	return s.run(func(v *vm) error {
		it, err := scope.Elements()
		if err != nil {
			return err
		}
		for _, el := range it {
			if err := v.rt.Set(el.Key(), v.toJS(el.Value())); err != nil {
				return err
			}
		}
		return nil
	})
}
