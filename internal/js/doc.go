// Package js runs MongoDB's server-side JavaScript ($where, $function,
// $accumulator, mapReduce) on goja, a pure-Go ECMAScript engine. Values
// cross between BSON and JavaScript as MongoDB's server maps them
// (convert.go); VMs are pooled and reused (pool.go); a script runs under its
// operation's context, interrupted when the context ends (maxTimeMS,
// killOp, disconnect), and under a memory limit (memory.go). Scripts see
// only ECMAScript and MongoDB's helpers (prelude.go): goja defines no
// require, load, file, network or process access, and none is added.
package js
