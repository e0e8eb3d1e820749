package js

// prelude defines, in every VM, the constructors of BSON values MongoDB's
// server scope provides (the Go side recognizes their values by
// prototype) and its helpers (Array.sum and the others of MongoDB's
// server-side utilities, tojson, isNumber...). Values hide their payload
// in non-enumerable properties so scripts iterating a document see only
// what MongoDB shows.
const prelude = `(function(g){
"use strict";
var newObjectId = g.__newObjectId, newUUID = g.__newUUID, bsonsize = g.__bsonsize;
function hidden(o, k, v){ Object.defineProperty(o, k, {value: v, enumerable: false, writable: false}); }
function ObjectId(hex){
	if (!(this instanceof ObjectId)) return new ObjectId(hex);
	if (hex === undefined) hex = newObjectId();
	if (typeof hex !== "string" || !/^[0-9a-fA-F]{24}$/.test(hex)) throw new Error("invalid object id: length");
	this.str = hex.toLowerCase();
}
ObjectId.prototype.toString = function(){ return 'ObjectId("' + this.str + '")'; };
ObjectId.prototype.tojson = ObjectId.prototype.toString;
ObjectId.prototype.valueOf = function(){ return this.str; };
ObjectId.prototype.toHexString = function(){ return this.str; };
ObjectId.prototype.equals = function(o){ return o instanceof ObjectId && o.str === this.str; };
ObjectId.prototype.getTimestamp = function(){ return new Date(parseInt(this.str.substr(0, 8), 16) * 1000); };
function NumberLong(v){
	if (!(this instanceof NumberLong)) return new NumberLong(v);
	var s = String(v === undefined ? 0 : v);
	if (!/^-?\d+$/.test(s)) { s = String(Math.trunc(Number(v))); }
	hidden(this, "_v", s);
	this.floatApprox = Number(s);
}
NumberLong.prototype.valueOf = function(){ return Number(this._v); };
NumberLong.prototype.toNumber = NumberLong.prototype.valueOf;
NumberLong.prototype.toString = function(){ return "NumberLong(" + (Math.abs(this.floatApprox) < 2147483648 ? this._v : '"' + this._v + '"') + ")"; };
NumberLong.prototype.tojson = NumberLong.prototype.toString;
NumberLong.prototype.equals = function(o){ return o instanceof NumberLong && o._v === this._v; };
NumberLong.prototype.compare = function(o){ var a = this.valueOf(), b = Number(o); return a < b ? -1 : a > b ? 1 : 0; };
function NumberInt(v){
	if (!(this instanceof NumberInt)) return new NumberInt(v);
	hidden(this, "_v", Number(v === undefined ? 0 : v) | 0);
}
NumberInt.prototype.valueOf = function(){ return this._v; };
NumberInt.prototype.toNumber = NumberInt.prototype.valueOf;
NumberInt.prototype.toString = function(){ return "NumberInt(" + this._v + ")"; };
NumberInt.prototype.tojson = NumberInt.prototype.toString;
function NumberDecimal(v){
	if (!(this instanceof NumberDecimal)) return new NumberDecimal(v);
	hidden(this, "_v", String(v === undefined ? "0" : v));
}
NumberDecimal.prototype.valueOf = function(){ return Number(this._v); };
NumberDecimal.prototype.toString = function(){ return 'NumberDecimal("' + this._v + '")'; };
NumberDecimal.prototype.tojson = NumberDecimal.prototype.toString;
function BinData(sub, b64){
	if (!(this instanceof BinData)) return new BinData(sub, b64);
	hidden(this, "_sub", sub | 0);
	hidden(this, "_b64", String(b64));
}
BinData.prototype.base64 = function(){ return this._b64; };
BinData.prototype.subtype = function(){ return this._sub; };
BinData.prototype.length = function(){ var s = this._b64.replace(/=+$/, ""); return Math.floor(s.length * 3 / 4); };
BinData.prototype.hex = function(){ return base64ToHex(this._b64); };
BinData.prototype.toString = function(){
	if (this._sub === 4 && this.length() === 16) {
		var h = this.hex();
		return 'UUID("' + h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20) + '")';
	}
	return 'BinData(' + this._sub + ',"' + this._b64 + '")';
};
BinData.prototype.tojson = BinData.prototype.toString;
var b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
function base64ToHex(b64){
	var s = b64.replace(/=+$/, ""), bits = 0, n = 0, out = "";
	for (var i = 0; i < s.length; i++) {
		bits = (bits << 6) | b64chars.indexOf(s.charAt(i));
		n += 6;
		if (n >= 8) { n -= 8; out += ((bits >> n) & 0xff | 0x100).toString(16).substr(1); }
	}
	return out;
}
// hexBinData is MongoDB's hexToBinData: a BinData of the subtype from an
// even-length string of hex digits.
function hexBinData(sub, h){
	if (typeof h !== "string") throw new Error("BinData data must be a String");
	if (h.length % 2 !== 0) throw new Error("BinData hex string must be an even length");
	if (!/^[0-9a-fA-F]*$/.test(h)) throw new Error("Invalid hex character in string");
	var out = "";
	for (var i = 0; i < h.length; i += 6) {
		var chunk = h.substr(i, 6), k = chunk.length / 2, v = parseInt(chunk, 16) << (8 * (3 - k));
		for (var j = 0; j < 4; j++) out += j <= k ? b64chars.charAt((v >> (18 - 6 * j)) & 63) : "=";
	}
	return new BinData(sub, out);
}
// UUID, MD5 and HexData are the free functions MongoDB's scope defines
// beside BinData: UUID() is a random subtype 4, UUID of the canonical
// 36-character form subtype 4, and of 32 hex digits the legacy subtype 3.
function UUID(s){
	if (arguments.length === 0) s = newUUID();
	else if (arguments.length !== 1) throw new Error("UUID needs 0 or 1 arguments");
	else if (String(s).length === 32) return hexBinData(3, s);
	var str = String(s);
	if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(str)) throw new Error("Invalid UUID string: " + str);
	return hexBinData(4, str.replace(/-/g, ""));
}
function MD5(s){
	if (arguments.length !== 1) throw new Error("MD5 needs 1 argument");
	if (String(s).length !== 32) throw new Error("MD5 string must have 32 characters");
	return hexBinData(5, s);
}
function HexData(sub, h){
	if (arguments.length !== 2) throw new Error("HexData needs 2 arguments");
	if (typeof sub !== "number" || (sub | 0) < 0 || (sub | 0) > 255) throw new Error("HexData subtype must be a Number between 0 and 255 inclusive");
	return hexBinData(sub | 0, h);
}
function Timestamp(t, i){
	if (!(this instanceof Timestamp)) return new Timestamp(t, i);
	this.t = t === undefined ? 0 : t >>> 0;
	this.i = i === undefined ? 0 : i >>> 0;
}
Timestamp.prototype.getTime = function(){ return this.t; };
Timestamp.prototype.getInc = function(){ return this.i; };
Timestamp.prototype.toString = function(){ return "Timestamp(" + this.t + ", " + this.i + ")"; };
Timestamp.prototype.tojson = Timestamp.prototype.toString;
function MinKey(){ return MinKey.instance; }
MinKey.prototype.toString = MinKey.prototype.tojson = function(){ return "MinKey"; };
MinKey.instance = Object.create(MinKey.prototype);
function MaxKey(){ return MaxKey.instance; }
MaxKey.prototype.toString = MaxKey.prototype.tojson = function(){ return "MaxKey"; };
MaxKey.instance = Object.create(MaxKey.prototype);
function Code(code, scope){
	if (!(this instanceof Code)) return new Code(code, scope);
	this.code = String(code);
	if (scope !== undefined) this.scope = scope;
}
Code.prototype.toString = function(){ return this.code; };
function BSONRegExp(source, flags){
	if (!(this instanceof BSONRegExp)) return new BSONRegExp(source, flags);
	this.source = String(source); this.flags = String(flags || "");
}
BSONRegExp.prototype.toString = function(){ return "/" + this.source + "/" + this.flags; };
function DBRef(ref, id, db){
	if (!(this instanceof DBRef)) return new DBRef(ref, id, db);
	this.$ref = ref; this.$id = id;
	if (db !== undefined) this.$db = db;
}
DBRef.prototype.getCollection = function(){ return this.$ref; };
DBRef.prototype.getId = function(){ return this.$id; };
DBRef.prototype.getDb = function(){ return this.$db; };
DBRef.prototype.toString = function(){ return "DBRef(" + tojson(this.$ref) + ", " + tojson(this.$id) + (this.$db === undefined ? "" : ", " + tojson(this.$db)) + ")"; };
function ISODate(s){ return s === undefined ? new Date() : new Date(s); }
function tojson(x){
	if (x === undefined) return "undefined";
	if (x === null) return "null";
	if (typeof x === "object" && typeof x.tojson === "function") return x.tojson();
	if (x instanceof Date) return 'ISODate("' + x.toISOString() + '")';
	if (Array.isArray(x)) return "[ " + x.map(tojson).join(", ") + " ]";
	if (typeof x === "object") return "{ " + Object.keys(x).map(function(k){ return JSON.stringify(k) + " : " + tojson(x[k]); }).join(", ") + " }";
	return JSON.stringify(x);
}
Array.contains = function(a, x){ for (var i = 0; i < a.length; i++) if (a[i] == x) return true; return false; };
Array.unique = function(a){ var u = []; for (var i = 0; i < a.length; i++) if (!Array.contains(u, a[i])) u.push(a[i]); return u; };
Array.shuffle = function(a){ for (var i = a.length - 1; i > 0; i--) { var j = Math.floor(Math.random() * (i + 1)); var t = a[i]; a[i] = a[j]; a[j] = t; } return a; };
Array.tojson = function(a){ return tojson(a); };
Array.sum = function(a){ if (a.length === 0) return null; var s = a[0]; for (var i = 1; i < a.length; i++) s += a[i]; return s; };
Array.avg = function(a){ if (a.length === 0) return null; return Array.sum(a) / a.length; };
Array.stdDev = function(a){ var m = Array.avg(a), s = 0; for (var i = 0; i < a.length; i++) s += (a[i] - m) * (a[i] - m); return Math.sqrt(s / a.length); };
Object.extend = function(dst, src, deep){ for (var k in src) { var v = src[k]; if (deep && typeof v === "object" && v !== null) v = Object.extend(Array.isArray(v) ? [] : {}, v, true); dst[k] = v; } return dst; };
Object.keySet = function(o){ var r = []; for (var k in o) r.push(k); return r; };
Object.bsonsize = function(o){ return bsonsize(o); };
function isString(x){ return typeof x === "string"; }
function isNumber(x){ return typeof x === "number"; }
function isObject(x){ return typeof x === "object" && x !== null; }
function printjson(x){ g.print(tojson(x)); }
// tojsononeline is tojson on one line, which is the only form this
// tojson writes: "{ \"a\" : 1 }", as MongoDB's tojson(x, " ", true).
function tojsononeline(x){ return tojson(x); }
function printjsononeline(x){ g.print(tojsononeline(x)); }
// The core of MongoDB's assert.js, which its server scopes load
// (MozJSImplScope's constructor runs assert.js and types.js): doassert
// throws an Error of the message, evaluated when a function and printed
// by tojson when an object; the assertions' messages are assert.js's.
function doassert(msg){
	if (typeof msg === "function") msg = msg();
	if (typeof msg === "object") msg = tojson(msg);
	throw Error(msg);
}
function sortDoc(doc){
	if (!(doc instanceof Object)) return doc;
	if (Array.isArray(doc)) return doc.map(sortDoc);
	var keys = Object.keys(doc);
	if (keys.length === 0) return doc;
	keys.sort();
	var out = {};
	for (var i = 0; i < keys.length; i++) {
		var v = doc[keys[i]];
		if (v && (Array.isArray(v) || v.constructor === Object)) v = sortDoc(v);
		out[keys[i]] = v;
	}
	return out;
}
function friendlyEqual(a, b){
	if (a == b) return true;
	var clean = function(s){ return s.replace(/NumberInt\((-?\d+)\)/g, "$1"); };
	return clean(tojson(a)) === clean(tojson(b));
}
var assert = (function(){
	function processMsg(msg){
		if (typeof msg === "function") return msg();
		if (typeof msg === "object") return tojson(msg);
		return msg;
	}
	function validate(msg){
		if (!msg) return;
		if (typeof msg === "function") {
			if (msg.length !== 0) doassert("msg function cannot expect any parameters.");
		} else if (typeof msg !== "string" && typeof msg !== "object") {
			doassert("msg parameter must be a string, function or object.");
		}
	}
	function build(msg, prefix){
		var full = prefix || "";
		if (prefix && msg) full += " : ";
		if (msg) full += processMsg(msg);
		return full;
	}
	var assert = function(b, msg){
		if (arguments.length > 2) doassert("Too many parameters to assert().");
		validate(msg);
		if (b) return;
		doassert(build(msg, "assert failed"));
	};
	function isEq(a, b){ return a == b || (a != null && b != null && friendlyEqual(a, b)); }
	assert.eq = function(a, b, msg){
		validate(msg);
		if (isEq(a, b)) return;
		doassert(build(msg, "[" + tojson(a) + "] != [" + tojson(b) + "] are not equal"));
	};
	assert.neq = function(a, b, msg){
		validate(msg);
		if (!isEq(a, b)) return;
		doassert(build(msg, "[" + a + "] != [" + b + "] are equal"));
	};
	assert.docEq = function(a, b, msg){
		validate(msg);
		if (a == b) return;
		var sa = sortDoc(a), sb = sortDoc(b);
		if (sa != null && sb != null && friendlyEqual(sa, sb)) return;
		doassert(build(msg, "[" + tojson(a) + "] != [" + tojson(b) + "] are not equal"));
	};
	assert.isnull = function(what, msg){
		validate(msg);
		if (what == null) return;
		doassert("supposed to be null (" + (processMsg(msg) || "") + ") was: " + tojson(what));
	};
	function compare(f, description){
		return function(a, b, msg){
			validate(msg);
			if (f(a, b)) return;
			doassert(build(msg, a + " is not " + description + " " + b));
		};
	}
	assert.lt = compare(function(a, b){ return a < b; }, "less than");
	assert.gt = compare(function(a, b){ return a > b; }, "greater than");
	assert.lte = compare(function(a, b){ return a <= b; }, "less than or eq");
	assert.gte = compare(function(a, b){ return a >= b; }, "greater than or eq");
	assert.contains = function(o, arr, msg){
		if (!Array.isArray(arr)) throw new Error("The second argument to assert.contains must be an array.");
		for (var i = 0; i < arr.length; i++) if (arr[i] == o || (arr[i] != null && o != null && friendlyEqual(arr[i], o))) return;
		doassert(build(msg, tojson(o) + " was not in " + tojson(arr)));
	};
	assert.hasFields = function(result, arr, msg){
		if (!Array.isArray(arr)) throw new Error("The second argument to assert.hasFields must be an array.");
		var count = 0;
		for (var field in result) if (arr.includes(field)) count++;
		if (count != arr.length) doassert(build(msg, "Not all of the values from " + tojson(arr) + " were in " + tojson(result)));
	};
	return assert;
})();
var defs = {ObjectId: ObjectId, NumberLong: NumberLong, NumberInt: NumberInt, NumberDecimal: NumberDecimal,
	BinData: BinData, UUID: UUID, MD5: MD5, HexData: HexData, Timestamp: Timestamp, MinKey: MinKey, MaxKey: MaxKey, Code: Code, BSONRegExp: BSONRegExp,
	DBRef: DBRef, ISODate: ISODate, tojson: tojson, isString: isString, isNumber: isNumber, isObject: isObject,
	printjson: printjson, tojsononeline: tojsononeline, printjsononeline: printjsononeline, doassert: doassert, sortDoc: sortDoc, assert: assert};
for (var k in defs) Object.defineProperty(g, k, {value: defs[k], enumerable: false, writable: true, configurable: true});
})(this);
`
