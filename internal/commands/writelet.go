package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// statementVars binds the variables of one write statement (update, delete,
// findAndModify): the command's let, whose expressions are evaluated for
// each statement as MongoDB seeds each statement's expression context, and
// an update statement's constants c, taken as literal values and shadowing
// let variables of the same name (MongoDB 7.0 defines them after let). Nil
// when there are none.
func statementVars(let, constants bson.Raw, clock expr.Clock) (*expr.Let, error) {
	if len(constants) == 0 {
		if len(let) == 0 {
			return nil, nil
		}
		return expr.Bind(let, clock)
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
	return expr.Bind(doc, clock)
}

// elementsOf is the elements of a validated document (none for nil).
func elementsOf(d bson.Raw) []bson.RawElement {
	els, _ := d.Elements()
	return els
}
