package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// The Atlas Search index commands. MongoDB 7.0 parses them (their IDL is
// strict), checks the caller's privilege on the collection, and then, on a
// server with no search index management host, fails with
// CommandNotSupported: they exist so that a client learns search needs
// Atlas. Folio has no search host either, so it answers as such a server.
func init() {
	register(createSearchIndexesCmd, &argSpec{path: "createSearchIndexes", fields: []argField{
		required("indexes", tArray),
	}, subs: []*argSpec{searchIndexDefinitionSpec}}, "createSearchIndexes")
	register(searchIndexCmd, &argSpec{path: "dropSearchIndex", fields: []argField{
		arg("name", tString), arg("id", tString),
	}}, "dropSearchIndex")
	register(searchIndexCmd, &argSpec{path: "updateSearchIndex", fields: []argField{
		arg("name", tString), arg("id", tString), required("definition", tDoc),
	}}, "updateSearchIndex")
	register(searchIndexCmd, &argSpec{path: "listSearchIndexes", fields: []argField{
		arg("name", tString), arg("id", tString),
	}}, "listSearchIndexes")
	for _, name := range [...]string{"createSearchIndexes", "dropSearchIndex", "updateSearchIndex", "listSearchIndexes"} {
		namesCollection(name)
		authzRules[name] = onNamespace(name)
	}
}

// searchIndexDefinitionSpec declares an entry of createSearchIndexes'
// indexes (the IDL's IndexDefinition), named in errors by the field's path.
var searchIndexDefinitionSpec = &argSpec{path: "createSearchIndexes.indexes", fields: []argField{
	arg("name", tString), required("definition", tDoc), arg("type", tString),
}}

// errSearchNeedsAtlas is MongoDB's answer to a search index command on a
// server without a search index management host.
var errSearchNeedsAtlas = mongoerr.New(mongoerr.CommandNotSupported, "Search index commands are only supported with Atlas.")

// createSearchIndexesCmd parses each entry of indexes as the IDL parses
// it, and then fails as searchIndexCmd does.
// https://www.mongodb.com/docs/v7.0/reference/command/createSearchIndexes/
func createSearchIndexesCmd(s *Service, r *Request) (bson.Raw, error) {
	docs, err := r.args.docs("indexes")
	for i := 0; err == nil && i < len(docs); i++ {
		_, err = parseSub(docs[i], searchIndexDefinitionSpec)
	}
	if err != nil {
		return nil, err
	}
	return searchIndexCmd(s, r)
}

// searchIndexCmd runs dropSearchIndex, updateSearchIndex and
// listSearchIndexes, whose fields the parse checked: it fails as MongoDB's
// does without a search host.
func searchIndexCmd(_ *Service, r *Request) (bson.Raw, error) {
	if _, err := collectionArg(r.Cmd, r.DB); err != nil {
		return nil, err
	}
	return nil, errSearchNeedsAtlas
}
