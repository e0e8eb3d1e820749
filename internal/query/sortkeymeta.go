package query

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/rawdoc"
)

// SortKeyArray is doc's key in the sort s as {$meta: "sortKey"} shows it
// (docsrc.Meta.SortKey): the array of each sort field's key, as the sort
// compares the document (an array's smallest element ascending, its
// largest descending, null for a missing field; the text score for a
// {$meta: "textScore"} key), an array even for one field, as MongoDB's
// DocumentMetadataFields::serializeSortKey makes it. A sort without keys
// ({$natural: ±1}, a hint in MongoDB) generates none: nil.
func (s *Sort) SortKeyArray(doc bson.Raw, meta docsrc.Meta) (bson.Raw, error) {
	if s.Empty() {
		return nil, nil
	}
	keys, err := s.KeysMeta(doc, meta)
	if err != nil {
		return nil, err
	}
	start, arr := bsoncore.AppendArrayStart(nil)
	for i, k := range keys {
		arr = rawdoc.AppendElement(arr, strconv.Itoa(i), sortValue(k))
	}
	arr, _ = bsoncore.AppendArrayEnd(arr, start)
	return arr, nil
}
