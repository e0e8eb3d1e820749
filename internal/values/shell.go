package values

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ShellDoc renders a document as MongoDB's BSONObj::toString does in plan
// summaries, messages and currentOp's truncated commands:
// { a: 1, b: -1.0, c: "hashed", d: { e: [ 1, 2 ] } }.
func ShellDoc(d bson.Raw) string {
	var b strings.Builder
	appendShellDoc(&b, d, false)
	return b.String()
}

func appendShellDoc(b *strings.Builder, d []byte, array bool) {
	elems, _ := bson.Raw(d).Elements()
	open, end := "{", "}"
	if array {
		open, end = "[", "]"
	}
	if len(elems) == 0 {
		b.WriteString(open + end)
		return
	}
	b.WriteString(open + " ")
	for i, e := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		if !array {
			b.WriteString(e.Key() + ": ")
		}
		switch v := e.Value(); v.Type {
		case bson.TypeDouble:
			b.WriteString(shellDouble(v.Double()))
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			appendShellDoc(b, v.Value, v.Type == bson.TypeArray)
		default:
			b.WriteString(Display(v))
		}
	}
	b.WriteString(" " + end)
}

// shellDouble renders a double as MongoDB does: integral values keep a
// ".0".
func shellDouble(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}
