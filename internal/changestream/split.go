package changestream

import (
	"cmp"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
)

// MaxEventSize is the largest event $changeStreamSplitLargeEvent returns
// whole (MongoDB's kBSONObjMaxChangeEventSize: its internal document
// limit, 16 MB and 16 KB, less 8 KB).
const MaxEventSize = 16<<20 + 8<<10

// Fragment is one piece of a split event: its token and document.
type Fragment struct {
	Token Token
	Doc   bson.Raw
}

// Split cuts event, whose token is tok, into fragments of at most max
// bytes, as $changeStreamSplitLargeEvent does: each fragment is {_id: its
// token (tok with its fragment's number), splitEvent: {fragment: n, of:
// total}} followed by some of the event's other top-level fields, taken
// smallest first (ties by name), as many as fit and at least one per
// fragment, so that the first fragments hold as many fields as they can.
func Split(event bson.Raw, tok Token, max int) ([]Fragment, error) {
	type field struct {
		key  string
		elem []byte // the whole element: type, name, value
	}
	var fields []field
	elems, err := event.Elements()
	if err != nil {
		return nil, err
	}
	for _, e := range elems {
		if k := e.Key(); k != "_id" {
			fields = append(fields, field{k, e})
		}
	}
	if len(fields) == 0 {
		return nil, mongoerr.New(mongoerr.SplitEmptyEvent, "Cannot split an empty event or an event containing solely '_id' field")
	}
	slices.SortStableFunc(fields, func(a, b field) int {
		return cmp.Or(cmp.Compare(len(a.elem), len(b.elem)), cmp.Compare(a.key, b.key))
	})
	var groups [][]field
	for i := 0; i < len(fields); {
		ft := tok
		ft.Split, ft.FragmentNum = true, uint32(len(groups))
		size := len(fragmentHead(ft, len(groups)+1, 0)) // all sizes are fixed
		j := i
		for {
			size += len(fields[j].elem)
			j++
			if j == len(fields) || size+len(fields[j].elem) > max {
				break
			}
		}
		if size > max {
			return nil, mongoerr.New(mongoerr.SplitFragmentTooLarge, "Splitting change event failed: fragment size %d is greater than maximum allowed fragment size %d", size, max)
		}
		groups = append(groups, fields[i:j])
		i = j
	}
	out := make([]Fragment, len(groups))
	for n, g := range groups {
		ft := tok
		ft.Split, ft.FragmentNum = true, uint32(n)
		doc := fragmentHead(ft, n+1, len(groups))
		doc = doc[:len(doc)-1] // reopened to add the fields
		for _, f := range g {
			doc = append(doc, f.elem...)
		}
		doc = append(doc, 0)
		bsoncore.UpdateLength(doc, 0, int32(len(doc)))
		out[n] = Fragment{Token: ft, Doc: doc}
	}
	return out, nil
}

// fragmentHead is the document {_id: tok, splitEvent: {fragment: n, of:
// total}}.
func fragmentHead(tok Token, n, total int) []byte {
	start, doc := bsoncore.AppendDocumentStart(nil)
	doc = bsoncore.AppendDocumentElement(doc, "_id", tok.Doc())
	split, sub := bsoncore.AppendDocumentElementStart(doc, "splitEvent")
	sub = bsoncore.AppendInt32Element(sub, "fragment", int32(n))
	sub = bsoncore.AppendInt32Element(sub, "of", int32(total))
	doc, _ = bsoncore.AppendDocumentEnd(sub, split)
	doc, _ = bsoncore.AppendDocumentEnd(doc, start)
	return doc
}
