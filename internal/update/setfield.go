package update

import (
	"bytes"
	"encoding/binary"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// setField is the commonest update, {$set: {<name>: <value>}} on one
// top-level field that is not _id (a name without '.' or a leading '$').
// It is applied to the document's bytes directly: the value replaces the
// first field of that name where one exists, else it is appended. The
// result and delta are those the update tree makes for it (the tests
// compare the two); Compile chooses it.
type setField struct {
	name string
	val  bson.RawValue
}

// compileSetField returns spec as a setField when it has that shape.
func compileSetField(spec bson.Raw, opts *Options) (setField, bool) {
	if len(opts.ArrayFilters) > 0 || rawdoc.Len(spec) != 1 {
		return setField{}, false
	}
	op := spec.Index(0)
	args, ok := op.Value().DocumentOK()
	if op.Key() != "$set" || !ok || rawdoc.Len(args) != 1 {
		return setField{}, false
	}
	f := args.Index(0)
	name := f.Key()
	if name == "" || name == "_id" || name[0] == '$' || strings.IndexByte(name, '.') >= 0 {
		return setField{}, false
	}
	return setField{name: name, val: f.Value()}, true
}

// apply returns doc with the field set, and unless insert the delta: the
// value updated (u) or inserted (i).
func (s *setField) apply(doc bson.Raw, insert bool) (bson.Raw, []byte) {
	start, end := len(doc)-1, len(doc)-1 // the field's element, or the end
	it := rawdoc.Iterate(doc)
	for off := 4; ; {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		next := off + 2 + len(k) + len(v.Value)
		if string(k) == s.name {
			if v.Type == s.val.Type && bytes.Equal(v.Value, s.val.Value) {
				return bytes.Clone(doc), nil
			}
			start, end = off, next
			break
		}
		off = next
	}
	docSize := len(doc) - (end - start) + 2 + len(s.name) + len(s.val.Value)
	if insert {
		return s.appendDoc(make([]byte, 0, docSize), doc, start, end), nil
	}
	section := "u"
	if end == start {
		section = "i"
	}
	// {<section>: {<name>: <value>}}: two headers, two ends and the
	// element, in the document's allocation
	buf := make([]byte, 0, docSize+16+len(s.name)+len(s.val.Value))
	out := s.appendDoc(buf[:0:docSize], doc, start, end)
	open, delta := bsoncore.AppendDocumentStart(buf[docSize:docSize])
	sub, delta := bsoncore.AppendDocumentElementStart(delta, section)
	delta = bsoncore.AppendValueElement(delta, s.name, bsoncore.Value{Type: bsoncore.Type(s.val.Type), Data: s.val.Value})
	delta, _ = bsoncore.AppendDocumentEnd(delta, sub)
	delta, _ = bsoncore.AppendDocumentEnd(delta, open)
	return out, delta
}

// appendDoc appends to out doc with its element doc[start:end] (empty at
// the end) replaced by the field set.
func (s *setField) appendDoc(out []byte, doc bson.Raw, start, end int) []byte {
	out = append(out, doc[:start]...)
	out = bsoncore.AppendValueElement(out, s.name, bsoncore.Value{Type: bsoncore.Type(s.val.Type), Data: s.val.Value})
	out = append(out, doc[end:]...)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out
}
