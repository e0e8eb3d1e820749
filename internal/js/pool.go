package js

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/dop251/goja"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxCachedFuncs bounds the functions one VM keeps compiled; past it the
// cache starts over.
const maxCachedFuncs = 256

// vm is one pooled goja runtime with MongoDB's prelude loaded and the
// prototypes the converters recognize values by.
type vm struct {
	rt    *goja.Runtime
	proto struct {
		objectID, numberLong, numberInt, numberDecimal, binData, timestamp,
		minKey, maxKey, code, bsonRegExp *goja.Object
	}
	minKey, maxKey       *goja.Object
	dateCtor, regexpCtor goja.Value
	ctors                struct{ objectID, numberLong, numberDecimal, binData, timestamp, code, bsonRegExp goja.Value }
	funcs                map[string]goja.Callable
	// emit receives the arguments of mapReduce's emit(key, value) calls;
	// nil outside a map.
	emit func(args []goja.Value)
	// emitFn is the global emit, defined while the VM serves a
	// mapReduce (emitSet) as MongoDB injects it into the map's scope
	// only.
	emitFn  goja.Value
	emitSet bool
	// mem is the memory account of the script running, if any.
	mem *account
	// ctx is the context of the session holding the VM.
	ctx context.Context
	// stored is the system.js read whose entries the globals hold, and
	// storedNames their names.
	stored      *storedScripts
	storedNames map[string]bool
}

var preludeProgram = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("prelude", prelude, false)
})

func newVM() *vm {
	rt := goja.New()
	rt.SetMaxCallStackSize(maxCallStack)
	v := &vm{rt: rt, funcs: map[string]goja.Callable{}}
	_ = rt.Set("print", func(goja.FunctionCall) goja.Value { return goja.Undefined() })
	_ = rt.Set("__newObjectId", func(goja.FunctionCall) goja.Value { return rt.ToValue(bson.NewObjectID().Hex()) })
	_ = rt.Set("__newUUID", func(goja.FunctionCall) goja.Value {
		var b [16]byte
		_, _ = rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40 // version 4
		b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
		h := hex.EncodeToString(b[:])
		return rt.ToValue(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:])
	})
	_ = rt.Set("__bsonsize", func(c goja.FunctionCall) goja.Value {
		doc, err := v.toDocument(c.Argument(0))
		if err != nil {
			panic(rt.NewTypeError(err.Error()))
		}
		return rt.ToValue(len(doc))
	})
	// hex_md5(string) is one of MongoDB's global utilities
	// (installGlobalUtils): the hex MD5 digest of a string.
	_ = rt.Set("hex_md5", func(c goja.FunctionCall) goja.Value {
		if len(c.Arguments) != 1 || !isJSString(c.Argument(0)) {
			panic(rt.NewTypeError("hex_md5 takes a single string argument -- hex_md5(string)"))
		}
		sum := md5.Sum([]byte(c.Argument(0).String()))
		return rt.ToValue(hex.EncodeToString(sum[:]))
	})
	// sleep(ms) is MongoDB's server-side sleep; it ends early when the
	// operation does (the interrupt then stops the script).
	_ = rt.Set("sleep", func(c goja.FunctionCall) goja.Value {
		t := time.NewTimer(time.Duration(c.Argument(0).ToInteger()) * time.Millisecond)
		defer t.Stop()
		ctx := v.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return goja.Undefined()
	})
	v.emitFn = rt.ToValue(func(c goja.FunctionCall) goja.Value {
		if v.emit == nil {
			panic(rt.NewTypeError("emit is only available in a mapReduce map function"))
		}
		v.emit(c.Arguments)
		return goja.Undefined()
	})
	if _, err := rt.RunProgram(preludeProgram()); err != nil {
		panic(err)
	}
	limitGrowth(v)
	get := func(name string) (goja.Value, *goja.Object) {
		c := rt.Get(name)
		return c, c.ToObject(rt).Get("prototype").ToObject(rt)
	}
	v.ctors.objectID, v.proto.objectID = get("ObjectId")
	v.ctors.numberLong, v.proto.numberLong = get("NumberLong")
	_, v.proto.numberInt = get("NumberInt")
	v.ctors.numberDecimal, v.proto.numberDecimal = get("NumberDecimal")
	v.ctors.binData, v.proto.binData = get("BinData")
	v.ctors.timestamp, v.proto.timestamp = get("Timestamp")
	_, v.proto.minKey = get("MinKey")
	_, v.proto.maxKey = get("MaxKey")
	v.ctors.code, v.proto.code = get("Code")
	v.ctors.bsonRegExp, v.proto.bsonRegExp = get("BSONRegExp")
	v.minKey = rt.Get("MinKey").ToObject(rt).Get("instance").ToObject(rt)
	v.maxKey = rt.Get("MaxKey").ToObject(rt).Get("instance").ToObject(rt)
	v.dateCtor, v.regexpCtor = rt.Get("Date"), rt.Get("RegExp")
	// The prelude's hooks, BSONRegExp (values keep its prototype) and
	// goja's GoError are no globals of MongoDB's scope
	// (jstests/core/query/js/js_global_scope.js).
	for _, name := range []string{"__newObjectId", "__newUUID", "__bsonsize", "BSONRegExp", "GoError"} {
		_ = rt.GlobalObject().Delete(name)
	}
	return v
}

// get takes a VM from the pool, or makes one.
func (e *Engine) get(key string) *vm {
	select {
	case v := <-e.pool(key):
		return v
	default:
		return newVM()
	}
}

// put returns a VM to the pool (dropping it when the pool is full). A VM
// whose script was interrupted or ran out of memory is dropped: its
// globals may hold what the script built. Globals of a finished script
// (obj included) stay, as in MongoDB's pooled scopes: pools are per
// database and user.
func (e *Engine) put(key string, v *vm, clean bool) {
	v.emit, v.mem, v.ctx = nil, nil, nil
	if v.emitSet {
		_ = v.rt.GlobalObject().Delete("emit")
		v.emitSet = false
	}
	if !clean {
		return
	}
	select {
	case e.pool(key) <- v:
	default:
	}
}

// isJSString reports whether v is a JavaScript string primitive.
func isJSString(v goja.Value) bool {
	_, ok := v.Export().(string)
	return ok
}
