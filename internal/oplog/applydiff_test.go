package oplog

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// applyDiffRows: a document, a diff (Extended JSON) and the document the
// diff makes of it, or the code MongoDB's reader of diffs fails it with.
var applyDiffRows = []struct {
	doc, diff, want string
	code            mongoerr.Code
}{
	{`{"_id": 1, "a": 1, "b": 2}`, `{"d": {"a": false}, "u": {"b": 3}, "i": {"c": 4}}`, `{"_id": 1, "b": 3, "c": 4}`, 0},
	// an updated field the document lacks is appended, an inserted one
	// that it has is moved to the end
	{`{"_id": 1, "a": 1, "b": 2}`, `{"u": {"z": 0}, "i": {"a": 5}}`, `{"_id": 1, "b": 2, "z": 0, "a": 5}`, 0},
	{`{"_id": 1, "a": {"b": 1}}`, `{"sa": {"u": {"b": 2}}}`, `{"_id": 1, "a": {"b": 2}}`, 0},
	{`{"_id": 1, "a": [1, 2, 3]}`, `{"sa": {"a": true, "l": 1, "u2": 9}}`, `{"_id": 1, "a": [1, null, 9]}`, 0},
	{`{"_id": 1, "a": [[1], {"x": 1}]}`, `{"sa": {"a": true, "s0": {"a": true, "u1": 2}, "s1": {"d": {"x": false}}}}`, `{"_id": 1, "a": [[1, 2], {}]}`, 0},
	// a sub-diff of an absent field, or of a field of another kind, leaves it
	{`{"_id": 1, "a": 5, "b": {"c": 1}}`, `{"sa": {"u": {"x": 1}}, "sb": {"a": true, "u0": 1}, "sz": {"u": {"y": 1}}}`, `{"_id": 1, "a": 5, "b": {"c": 1}}`, 0},
	{`{"_id": 1}`, `{}`, ``, mongoerr.DiffEmpty},
	{`{"_id": 1}`, `{"sa": {}}`, ``, mongoerr.DiffEmpty},
	{`{"_id": 1}`, `{"u": {"a": 1}, "d": {"b": false}}`, ``, mongoerr.DiffUnexpectedSection},
	{`{"_id": 1}`, `{"u": {"a": 1}, "u": {"b": 1}}`, ``, mongoerr.DiffUnexpectedSection},
	{`{"_id": 1}`, `{"x": {"a": 1}}`, ``, mongoerr.DiffUnexpectedSection},
	{`{"_id": 1}`, `{"": {"a": 1}}`, ``, mongoerr.DiffSectionName},
	{`{"_id": 1}`, `{"u": 5}`, ``, mongoerr.DiffSectionType},
	{`{"_id": 1}`, `{"sa": 5}`, ``, mongoerr.DiffSubDiffNotObject},
	{`{"_id": 1}`, `{"sa": {"a": false, "u0": 1}}`, ``, mongoerr.DiffArrayHeader},
	{`{"_id": 1}`, `{"sa": {"a": true, "l": "x"}}`, ``, mongoerr.DiffSectionType},
	{`{"_id": 1}`, `{"sa": {"a": true, "u": 1}}`, ``, mongoerr.DiffArrayFieldName},
	{`{"_id": 1}`, `{"sa": {"a": true, "ux": 1}}`, ``, mongoerr.DiffArrayIndex},
	{`{"_id": 1}`, `{"sa": {"a": true, "u-1": 1}}`, ``, mongoerr.DiffArrayIndex},
	{`{"_id": 1}`, `{"sa": {"a": true, "d0": 1}}`, ``, mongoerr.DiffArrayModification},
	{`{"_id": 1}`, `{"sa": {"a": true, "s0": 1}}`, ``, mongoerr.DiffArraySubDiff},
	{`{"_id": 1}`, `{"sa": {"a": true, "u9999999999": 1}}`, ``, mongoerr.UpdateResultTooLarge},
}

func TestApplyDiffRows(t *testing.T) {
	for _, r := range applyDiffRows {
		got, err := ApplyDiff(extJSON(t, r.doc), extJSON(t, r.diff))
		switch {
		case r.code != 0 && !mongoerr.Is(err, r.code):
			t.Errorf("%s on %s: %v, want code %d", r.diff, r.doc, err, r.code)
		case r.code == 0 && err != nil:
			t.Errorf("%s on %s: %v", r.diff, r.doc, err)
		case r.code == 0 && string(got) != string(extJSON(t, r.want)):
			t.Errorf("%s on %s: %s, want %s", r.diff, r.doc, got, r.want)
		}
	}
}

func extJSON(t testing.TB, s string) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

// FuzzApplyDiff: any diff a client sends in applyOps either fails with a
// MongoDB error or makes a valid document; nothing panics.
func FuzzApplyDiff(f *testing.F) {
	for _, r := range applyDiffRows {
		f.Add([]byte(extJSON(f, r.doc)), []byte(extJSON(f, r.diff)))
	}
	f.Fuzz(func(t *testing.T, doc, diff []byte) {
		// the server takes only BSON it validated (rawdoc.Validate)
		if rawdoc.Validate(doc) != nil || rawdoc.Validate(diff) != nil {
			return
		}
		out, err := ApplyDiff(doc, diff)
		if err != nil {
			if mongoerr.As(err).Code == mongoerr.InternalError {
				t.Fatalf("%v", err)
			}
			return
		}
		if err := rawdoc.Validate(out); err != nil {
			t.Fatalf("%x with %x made %x: %v", doc, diff, out, err)
		}
	})
}
