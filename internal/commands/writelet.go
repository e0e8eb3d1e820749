package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// statementLet is the let document of one update statement, which
// scriptVars binds for each statement as MongoDB seeds each statement's
// expression context: the command's let, and the statement's constants,
// taken as literal values and shadowing let variables of the same name
// (MongoDB 7.0 defines them after let).
func statementLet(let, constants bson.Raw) bson.Raw {
	if len(constants) == 0 {
		return let
	}
	start, doc := bsoncore.AppendDocumentStart(nil)
	for _, el := range elementsOf(let) {
		if _, err := constants.LookupErr(el.Key()); err != nil {
			doc = append(doc, el...)
		}
	}
	for _, el := range elementsOf(constants) {
		var lit int32
		lit, doc = bsoncore.AppendDocumentElementStart(doc, el.Key())
		doc = rawdoc.AppendElement(doc, "$literal", el.Value())
		doc, _ = bsoncore.AppendDocumentEnd(doc, lit)
	}
	doc, _ = bsoncore.AppendDocumentEnd(doc, start)
	return doc
}

// elementsOf is the elements of a validated document (none for nil).
func elementsOf(d bson.Raw) []bson.RawElement {
	els, _ := d.Elements()
	return els
}
