package driver_test

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestExplainStageStats: from verbosity executionStats, each stage of
// executionStages carries its statistics as MongoDB 7.0's classic engine
// reports them (statsToBSON): after stage and filter, nReturned,
// executionTimeMillisEstimate, works, advanced, needTime, needYield,
// saveState, restoreState, isEOF; then its own fields and statistics
// (COLLSCAN docsExamined; IXSCAN keysExamined, seeks, dupsTested,
// dupsDropped; FETCH docsExamined, alreadyHasObj; IDHACK keysExamined,
// docsExamined; SORT totalDataSizeSorted, usedDisk, spills), then its
// input. The figures follow each stage's doWork: COLLSCAN's first work
// opens its cursor, IXSCAN works once per key, FETCH, SKIP and the
// projections once per work of their input, SORT answers NEED_TIME while
// it loads, LIMIT ends without working its input past limitAmount, and a
// stage is asked once past its last result (isEOF) unless a LIMIT above
// stopped first.
func TestExplainStageStats(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	coll := db.Collection("stagestats")
	docs := make([]any, 100)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	mk := db.Collection("stagestats_mk")
	mdocs := make([]any, 10)
	for i := range mdocs {
		mdocs[i] = bson.D{{Key: "_id", Value: i}, {Key: "t", Value: bson.A{i, i + 1}}}
	}
	if _, err := mk.InsertMany(ctx, mdocs); err != nil {
		t.Fatal(err)
	}
	if _, err := mk.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	orColl := db.Collection("stagestats_or")
	odocs := make([]any, 30)
	for i := range odocs {
		odocs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 5}, {Key: "b", Value: i % 7}, {Key: "t", Value: bson.A{i, i + 1}}}
	}
	if _, err := orColl.InsertMany(ctx, odocs); err != nil {
		t.Fatal(err)
	}
	if _, err := orColl.Indexes().CreateMany(ctx, []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "b", Value: 1}}}, {Keys: bson.D{{Key: "t", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	common := []string{"nReturned", "executionTimeMillisEstimate", "works", "advanced", "needTime", "needYield", "saveState", "restoreState", "isEOF"}
	// fig is a stage's expected figures: nReturned (= advanced), works,
	// needTime, isEOF, and stage-specific counts.
	type fig struct {
		stage                    string
		returned, works, needTme int
		eof                      int
		specific                 bson.D // values compared as numbers or as they are
		order                    []string
	}
	type tcase struct {
		name   string
		coll   string
		cmd    bson.D
		stages []fig
	}
	find := func(c string, filter bson.D, more ...bson.E) bson.D {
		return append(bson.D{{Key: "find", Value: c}, {Key: "filter", Value: filter}}, more...)
	}
	ixscanOrder := append(append([]string{"stage"}, common...), "keyPattern", "indexName", "isMultiKey", "multiKeyPaths", "isUnique", "isSparse", "isPartial", "indexVersion", "direction", "indexBounds", "keysExamined", "seeks", "dupsTested", "dupsDropped")
	for _, tc := range []tcase{
		{"collscan", "stagestats", find("stagestats", bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 50}}}}), []fig{
			{"COLLSCAN", 49, 102, 52, 1, bson.D{{Key: "direction", Value: "forward"}, {Key: "docsExamined", Value: 100}},
				append(append([]string{"stage", "filter"}, common...), "direction", "docsExamined")},
		}},
		{"fetch ixscan", "stagestats", find("stagestats", bson.D{{Key: "a", Value: 3}, {Key: "b", Value: bson.D{{Key: "$gt", Value: 50}}}}), []fig{
			{"FETCH", 5, 11, 5, 1, bson.D{{Key: "docsExamined", Value: 10}, {Key: "alreadyHasObj", Value: 0}},
				append(append([]string{"stage", "filter"}, common...), "docsExamined", "alreadyHasObj", "inputStage")},
			{"IXSCAN", 10, 11, 0, 1, bson.D{{Key: "keysExamined", Value: 10}, {Key: "seeks", Value: 1}, {Key: "dupsTested", Value: 0}, {Key: "dupsDropped", Value: 0}}, ixscanOrder},
		}},
		{"idhack", "stagestats", find("stagestats", bson.D{{Key: "_id", Value: 5}}), []fig{
			{"IDHACK", 1, 2, 0, 1, bson.D{{Key: "keysExamined", Value: 1}, {Key: "docsExamined", Value: 1}},
				append(append([]string{"stage"}, common...), "keysExamined", "docsExamined")},
		}},
		{"idhack missing", "stagestats", find("stagestats", bson.D{{Key: "_id", Value: 500}}), []fig{
			{"IDHACK", 0, 1, 0, 1, bson.D{{Key: "keysExamined", Value: 0}, {Key: "docsExamined", Value: 0}}, nil},
		}},
		{"sort skip projection", "stagestats", find("stagestats", bson.D{},
			bson.E{Key: "sort", Value: bson.D{{Key: "b", Value: -1}}}, bson.E{Key: "limit", Value: 3}, bson.E{Key: "skip", Value: 1},
			bson.E{Key: "projection", Value: bson.D{{Key: "b", Value: 1}}}), []fig{
			{"PROJECTION_SIMPLE", 3, 107, 103, 1, bson.D{{Key: "transformBy", Value: bson.D{{Key: "b", Value: int32(1)}}}},
				append(append([]string{"stage"}, common...), "transformBy", "inputStage")},
			{"SKIP", 3, 107, 103, 1, bson.D{{Key: "skipAmount", Value: 1}},
				append(append([]string{"stage"}, common...), "skipAmount", "inputStage")},
			{"SORT", 4, 107, 102, 1, bson.D{{Key: "memLimit", Value: 104857600}, {Key: "limitAmount", Value: 4}, {Key: "type", Value: "simple"}, {Key: "usedDisk", Value: false}, {Key: "spills", Value: 0}},
				append(append([]string{"stage"}, common...), "sortPattern", "memLimit", "limitAmount", "type", "totalDataSizeSorted", "usedDisk", "spills", "inputStage")},
			{"COLLSCAN", 100, 102, 1, 1, bson.D{{Key: "docsExamined", Value: 100}}, nil},
		}},
		{"limit over an index scan", "stagestats", find("stagestats", bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 0}}}},
			bson.E{Key: "limit", Value: 5}, bson.E{Key: "hint", Value: bson.D{{Key: "a", Value: 1}}}), []fig{
			{"LIMIT", 5, 6, 0, 1, bson.D{{Key: "limitAmount", Value: 5}}, append(append([]string{"stage"}, common...), "limitAmount", "inputStage")},
			{"FETCH", 5, 5, 0, 0, bson.D{{Key: "docsExamined", Value: 5}}, nil},
			{"IXSCAN", 5, 5, 0, 0, bson.D{{Key: "keysExamined", Value: 5}, {Key: "seeks", Value: 1}}, nil},
		}},
		{"limit over a collection scan", "stagestats", find("stagestats", bson.D{}, bson.E{Key: "limit", Value: 5}), []fig{
			{"LIMIT", 5, 7, 1, 1, bson.D{{Key: "limitAmount", Value: 5}}, nil},
			{"COLLSCAN", 5, 6, 1, 0, bson.D{{Key: "docsExamined", Value: 5}}, nil},
		}},
		{"limit not reached", "stagestats", find("stagestats", bson.D{{Key: "a", Value: 3}}, bson.E{Key: "limit", Value: 50}), []fig{
			{"LIMIT", 10, 11, 0, 1, nil, nil},
			{"FETCH", 10, 11, 0, 1, bson.D{{Key: "docsExamined", Value: 10}}, nil},
			{"IXSCAN", 10, 11, 0, 1, bson.D{{Key: "keysExamined", Value: 10}}, nil},
		}},
		{"multikey", "stagestats_mk", find("stagestats_mk", bson.D{{Key: "t", Value: bson.D{{Key: "$gte", Value: 3}}}}), []fig{
			// keys >= 3: one of _id 2, two of each of _id 3 to 9
			{"FETCH", 8, 16, 7, 1, bson.D{{Key: "docsExamined", Value: 8}}, nil},
			{"IXSCAN", 8, 16, 7, 1, bson.D{{Key: "isMultiKey", Value: true}, {Key: "keysExamined", Value: 15}, {Key: "seeks", Value: 1},
				{Key: "dupsTested", Value: 15}, {Key: "dupsDropped", Value: 7}}, nil},
		}},
		// An index union (or.cpp): the OR works once per work of its
		// current scan and drops the documents a scan before found
		// (dupsDropped), which that scan's IXSCAN advanced; a multikey
		// scan drops its own second keys itself. a = 1: _id 1, 6, 11,
		// 16, 21, 26; b = 1: _id 1, 8, 15, 22, 29.
		{"or", "stagestats_or", find("stagestats_or", bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "b", Value: 1}}}}}), []fig{
			{stage: "FETCH", returned: 10, works: 13, needTme: 2, eof: 1, specific: bson.D{{Key: "docsExamined", Value: 10}}},
			{stage: "OR", returned: 10, works: 13, needTme: 2, eof: 1, specific: bson.D{{Key: "dupsTested", Value: 11}, {Key: "dupsDropped", Value: 1}},
				order: append(append([]string{"stage"}, common...), "dupsTested", "dupsDropped", "inputStages")},
			{stage: "IXSCAN@1", returned: 6, works: 7, eof: 1, specific: bson.D{{Key: "indexName", Value: "a_1"}, {Key: "keysExamined", Value: 6}, {Key: "seeks", Value: 1},
				{Key: "dupsTested", Value: 0}, {Key: "dupsDropped", Value: 0}}, order: ixscanOrder},
			{stage: "IXSCAN@2", returned: 5, works: 6, eof: 1, specific: bson.D{{Key: "indexName", Value: "b_1"}, {Key: "keysExamined", Value: 5}}},
		}},
		// t >= 25: one key of _id 24, two of each of _id 25 to 29; a = 0:
		// _id 0, 5, ..., 25, whose 25 the first scan found.
		{"or multikey", "stagestats_or", find("stagestats_or", bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "t", Value: bson.D{{Key: "$gte", Value: 25}}}}, bson.D{{Key: "a", Value: 0}}}}}), []fig{
			{stage: "FETCH", returned: 11, works: 19, needTme: 7, eof: 1, specific: bson.D{{Key: "docsExamined", Value: 11}}},
			{stage: "OR", returned: 11, works: 19, needTme: 7, eof: 1, specific: bson.D{{Key: "dupsTested", Value: 12}, {Key: "dupsDropped", Value: 1}}},
			{stage: "IXSCAN@1", returned: 6, works: 12, needTme: 5, eof: 1, specific: bson.D{{Key: "isMultiKey", Value: true}, {Key: "keysExamined", Value: 11},
				{Key: "dupsTested", Value: 11}, {Key: "dupsDropped", Value: 5}}},
			{stage: "IXSCAN@2", returned: 6, works: 7, eof: 1, specific: bson.D{{Key: "indexName", Value: "a_1"}, {Key: "keysExamined", Value: 6}}},
		}},
		// The limit ends the run in the first scan; the second never works.
		{"or limit", "stagestats_or", find("stagestats_or", bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "b", Value: 1}}}}},
			bson.E{Key: "limit", Value: 3}), []fig{
			{stage: "LIMIT", returned: 3, works: 4, eof: 1},
			{stage: "FETCH", returned: 3, works: 3},
			{stage: "OR", returned: 3, works: 3, specific: bson.D{{Key: "dupsTested", Value: 3}, {Key: "dupsDropped", Value: 0}}},
			{stage: "IXSCAN@1", returned: 3, works: 3, specific: bson.D{{Key: "keysExamined", Value: 3}, {Key: "seeks", Value: 1}}},
			{stage: "IXSCAN@2", specific: bson.D{{Key: "keysExamined", Value: 0}, {Key: "seeks", Value: 0}}},
		}},
		// A count (count.cpp): COUNT returns nothing, works its input once
		// per work of its own, skips then counts its input's results
		// (nCounted, nSkipped before its input) and ends at its limit
		// without working its input. COUNT_SCAN (count_scan.cpp) reads a
		// key a work, its keysExamined before its own fields, and the
		// read finding no key past its range is one more key examined.
		{"count scan", "stagestats", bson.D{{Key: "count", Value: "stagestats"}, {Key: "query", Value: bson.D{{Key: "a", Value: 3}}}}, []fig{
			{stage: "COUNT", works: 11, needTme: 10, eof: 1, specific: bson.D{{Key: "nCounted", Value: 10}, {Key: "nSkipped", Value: 0}},
				order: append(append([]string{"stage"}, common...), "nCounted", "nSkipped", "inputStage")},
			{stage: "COUNT_SCAN", returned: 10, works: 11, eof: 1, specific: bson.D{{Key: "keysExamined", Value: 11}},
				order: append(append([]string{"stage"}, common...), "keysExamined", "keyPattern", "indexName", "isMultiKey", "multiKeyPaths", "isUnique", "isSparse", "isPartial", "indexVersion", "indexBounds")},
		}},
		{"count scan skip limit", "stagestats", bson.D{{Key: "count", Value: "stagestats"}, {Key: "query", Value: bson.D{{Key: "a", Value: 3}}},
			{Key: "skip", Value: 2}, {Key: "limit", Value: -5}}, []fig{
			{stage: "COUNT", works: 8, needTme: 7, eof: 1, specific: bson.D{{Key: "nCounted", Value: 5}, {Key: "nSkipped", Value: 2}}},
			{stage: "COUNT_SCAN", returned: 7, works: 7, specific: bson.D{{Key: "keysExamined", Value: 7}}},
		}},
		{"count collscan", "stagestats", bson.D{{Key: "count", Value: "stagestats"}, {Key: "query", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 95}}}}}}, []fig{
			{stage: "COUNT", works: 102, needTme: 101, eof: 1, specific: bson.D{{Key: "nCounted", Value: 4}, {Key: "nSkipped", Value: 0}}},
			{stage: "COLLSCAN", returned: 4, works: 102, needTme: 97, eof: 1, specific: bson.D{{Key: "docsExamined", Value: 100}}},
		}},
		// An EOF stage is at its end before the COUNT works it.
		{"count missing", "stagestats", bson.D{{Key: "count", Value: "stagestats_missing"}, {Key: "query", Value: bson.D{{Key: "a", Value: 3}}}}, []fig{
			{stage: "COUNT", works: 1, eof: 1, specific: bson.D{{Key: "nCounted", Value: 0}, {Key: "nSkipped", Value: 0}}},
			{stage: "EOF", eof: 1, order: append([]string{"stage"}, common...)},
		}},
		// A write (update_stage.cpp, delete_stage.cpp): UPDATE and DELETE
		// work their input once per work of their own, each document
		// written answering NEED_TIME (ADVANCED for findAndModify, which
		// returns it); their counts follow the common statistics. A write
		// of one document ends after it without working its input again,
		// and an IDHACK is at its end after its lookup. Nothing is written.
		{"update multi", "stagestats", bson.D{{Key: "update", Value: "stagestats"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 3}}},
			{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "multi", Value: true}}}}}, []fig{
			{stage: "UPDATE", works: 11, needTme: 10, eof: 1, specific: bson.D{{Key: "nMatched", Value: 10}, {Key: "nWouldModify", Value: 10}, {Key: "nWouldUpsert", Value: 0}},
				order: append(append([]string{"stage"}, common...), "nMatched", "nWouldModify", "nWouldUpsert", "inputStage")},
			{stage: "FETCH", returned: 10, works: 11, eof: 1, specific: bson.D{{Key: "docsExamined", Value: 10}}},
			{stage: "IXSCAN", returned: 10, works: 11, eof: 1, specific: bson.D{{Key: "keysExamined", Value: 10}}},
		}},
		{"update one", "stagestats", bson.D{{Key: "update", Value: "stagestats"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 3}}},
			{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}}}}}, []fig{
			{stage: "UPDATE", works: 2, needTme: 1, eof: 1, specific: bson.D{{Key: "nMatched", Value: 1}, {Key: "nWouldModify", Value: 1}}},
			{stage: "FETCH", returned: 1, works: 1, specific: bson.D{{Key: "docsExamined", Value: 1}}},
			{stage: "IXSCAN", returned: 1, works: 1, specific: bson.D{{Key: "keysExamined", Value: 1}}},
		}},
		{"update by _id", "stagestats", bson.D{{Key: "update", Value: "stagestats"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 7}}},
			{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "multi", Value: true}}}}}, []fig{
			{stage: "UPDATE", works: 2, needTme: 1, eof: 1, specific: bson.D{{Key: "nMatched", Value: 1}}},
			{stage: "IDHACK", returned: 1, works: 1, eof: 1, specific: bson.D{{Key: "keysExamined", Value: 1}, {Key: "docsExamined", Value: 1}}},
		}},
		{"upsert", "stagestats", bson.D{{Key: "update", Value: "stagestats"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 99}}},
			{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}}}}}, []fig{
			{stage: "UPDATE", works: 1, eof: 1, specific: bson.D{{Key: "nMatched", Value: 0}, {Key: "nWouldModify", Value: 0}, {Key: "nWouldUpsert", Value: 1}}},
			{stage: "FETCH", works: 1, eof: 1},
			{stage: "IXSCAN", works: 1, eof: 1, specific: bson.D{{Key: "keysExamined", Value: 0}}},
		}},
		{"delete multi", "stagestats", bson.D{{Key: "delete", Value: "stagestats"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 3}}},
			{Key: "limit", Value: 0}}}}}, []fig{
			{stage: "DELETE", works: 11, needTme: 10, eof: 1, specific: bson.D{{Key: "nWouldDelete", Value: 10}},
				order: append(append([]string{"stage"}, common...), "nWouldDelete", "inputStage")},
			{stage: "FETCH", returned: 10, works: 11, eof: 1},
		}},
		{"delete one", "stagestats", bson.D{{Key: "delete", Value: "stagestats"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 1}}}}}, []fig{
			{stage: "DELETE", works: 3, needTme: 2, eof: 1, specific: bson.D{{Key: "nWouldDelete", Value: 1}}},
			{stage: "COLLSCAN", returned: 1, works: 2, needTme: 1, specific: bson.D{{Key: "docsExamined", Value: 1}}},
		}},
		// A sorted findAndModify takes the first of a SORT of limit 1,
		// which is at its end once it returned it.
		{"findAndModify sorted", "stagestats", bson.D{{Key: "findAndModify", Value: "stagestats"}, {Key: "query", Value: bson.D{{Key: "a", Value: 3}}},
			{Key: "sort", Value: bson.D{{Key: "b", Value: -1}}}, {Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}}, []fig{
			{stage: "UPDATE", returned: 1, works: 13, needTme: 11, eof: 1, specific: bson.D{{Key: "nMatched", Value: 1}}},
			{stage: "SORT", returned: 1, works: 12, needTme: 11, eof: 1, specific: bson.D{{Key: "limitAmount", Value: 1}}},
			{stage: "FETCH", returned: 10, works: 11, eof: 1},
			{stage: "IXSCAN", returned: 10, works: 11, eof: 1},
		}},
		// findAndModify's upsert with new returns the document it would
		// insert, in the work its input ended, and ends in the next
		// (upsert_stage.cpp); its fields project what the write stage
		// returns, a PROJECTION_DEFAULT over it (explain_find_and_modify.js).
		{"findAndModify upsert new", "stagestats", bson.D{{Key: "findAndModify", Value: "stagestats"}, {Key: "query", Value: bson.D{{Key: "a", Value: 99}}},
			{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}, {Key: "new", Value: true}}, []fig{
			{stage: "UPDATE", returned: 1, works: 2, eof: 1, specific: bson.D{{Key: "nMatched", Value: 0}, {Key: "nWouldUpsert", Value: 1}}},
			{stage: "FETCH", works: 1, eof: 1},
		}},
		{"findAndModify fields", "stagestats", bson.D{{Key: "findAndModify", Value: "stagestats"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 7}}},
			{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "fields", Value: bson.D{{Key: "b", Value: 1}}}}, []fig{
			{stage: "PROJECTION_DEFAULT", returned: 1, works: 2, eof: 1, specific: bson.D{{Key: "transformBy", Value: bson.D{{Key: "b", Value: int32(1)}}}},
				order: append(append([]string{"stage"}, common...), "transformBy", "inputStage")},
			{stage: "UPDATE", returned: 1, works: 2, eof: 1, specific: bson.D{{Key: "nMatched", Value: 1}}},
			{stage: "IDHACK", returned: 1, works: 1, eof: 1},
		}},
		// A distinct scan (distinct_scan.cpp) reads a key a work, returns
		// one entry per value and seeks past the value's other entries;
		// keysExamined follows its own fields. a >= 7: 7, 8, 9.
		{"distinct scan", "stagestats", bson.D{{Key: "distinct", Value: "stagestats"}, {Key: "key", Value: "a"},
			{Key: "query", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 7}}}}}}, []fig{
			{stage: "PROJECTION_COVERED", returned: 3, works: 4, eof: 1},
			{stage: "DISTINCT_SCAN", returned: 3, works: 4, eof: 1, specific: bson.D{{Key: "keysExamined", Value: 3}},
				order: append(append([]string{"stage"}, common...), "keyPattern", "indexName", "isMultiKey", "multiKeyPaths", "isUnique", "isSparse", "isPartial", "indexVersion", "direction", "indexBounds", "keysExamined")},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: tc.cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			stage := out.Lookup("executionStats", "executionStages").Document()
			var or bson.Raw
			for i, want := range tc.stages {
				// A stage named NAME@n is the n-th of the last OR's
				// inputStages.
				name, branch, inOr := strings.Cut(want.stage, "@")
				want.stage = name
				switch {
				case inOr:
					stage = or.Lookup("inputStages", strconv.Itoa(int(branch[0]-'1'))).Document()
				case i > 0:
					stage = stage.Lookup("inputStage").Document()
				}
				if want.stage == "OR" {
					or = stage
				}
				if got := stage.Lookup("stage").StringValue(); got != want.stage {
					t.Fatalf("stage %d is %s, want %s: %s", i, got, want.stage, out)
				}
				nums := bson.D{{Key: "nReturned", Value: want.returned}, {Key: "works", Value: want.works}, {Key: "advanced", Value: want.returned},
					{Key: "needTime", Value: want.needTme}, {Key: "needYield", Value: 0}, {Key: "saveState", Value: 0}, {Key: "restoreState", Value: 0},
					{Key: "isEOF", Value: want.eof}}
				for _, e := range append(nums, want.specific...) {
					v, err := stage.LookupErr(e.Key)
					if err != nil {
						t.Fatalf("%s has no %s: %s", want.stage, e.Key, stage)
					}
					switch w := e.Value.(type) {
					case int:
						// an int while it fits (appendNumber, appendIntOrLL)
						if n, ok := v.AsInt64OK(); !ok || v.Type != bson.TypeInt32 || n != int64(w) {
							t.Errorf("%s %s = %v, want int %d", want.stage, e.Key, v, w)
						}
					default:
						typ, data, err := bson.MarshalValue(w)
						if err != nil {
							t.Fatal(err)
						}
						if !v.Equal(bson.RawValue{Type: typ, Value: data}) {
							t.Errorf("%s %s = %v, want %v", want.stage, e.Key, v, w)
						}
					}
				}
				if v, err := stage.LookupErr("executionTimeMillisEstimate"); err != nil || v.Type != bson.TypeInt32 {
					t.Errorf("%s executionTimeMillisEstimate = %v", want.stage, v)
				}
				if want.stage == "SORT" {
					if n, ok := stage.Lookup("totalDataSizeSorted").AsInt64OK(); !ok || n <= 0 {
						t.Errorf("SORT totalDataSizeSorted = %v", stage.Lookup("totalDataSizeSorted"))
					}
				}
				if want.order != nil {
					elems, _ := stage.Elements()
					var keys []string
					for _, el := range elems {
						keys = append(keys, el.Key())
					}
					if !slices.Equal(keys, want.order) {
						t.Errorf("%s fields %v, want %v", want.stage, keys, want.order)
					}
				}
			}
		})
	}
	// findAndModify's projection is in its winning plan too.
	fields := bson.D{{Key: "findAndModify", Value: "stagestats"}, {Key: "query", Value: bson.D{{Key: "a", Value: 2}}}, {Key: "remove", Value: true},
		{Key: "fields", Value: bson.D{{Key: "b", Value: 0}}}}
	win, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: fields}, {Key: "verbosity", Value: "queryPlanner"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if plan := win.Lookup("queryPlanner", "winningPlan").Document(); plan.Lookup("stage").StringValue() != "PROJECTION_DEFAULT" ||
		plan.Lookup("inputStage", "stage").StringValue() != "DELETE" || plan.Lookup("works").Type != 0 {
		t.Errorf("findAndModify with fields: winning plan %s, want PROJECTION_DEFAULT over DELETE", plan)
	}
	// At verbosity queryPlanner the stages carry no statistics.
	out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find("stagestats", bson.D{{Key: "b", Value: 1}})}, {Key: "verbosity", Value: "queryPlanner"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.LookupErr("queryPlanner", "winningPlan", "works"); err == nil {
		t.Fatalf("queryPlanner's winningPlan has works: %s", out)
	}
}

// TestExplainFetchResidualFilter: the FETCH above an index scan shows only
// the predicates its index bounds do not answer exactly; MongoDB's
// planner drops the exact ones (QueryPlannerAccess, tightness EXACT). A
// multikey index's bounds leave every predicate to the FETCH.
func TestExplainFetchResidualFilter(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	coll := db.Collection("residual")
	docs := make([]any, 100)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i}, {Key: "t", Value: bson.A{i, i + 1}}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "t", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	gt := func(n int) bson.D { return bson.D{{Key: "$gt", Value: n}} }
	eq := func(v any) bson.D { return bson.D{{Key: "$eq", Value: v}} }
	// the filters as MongoDB serializes them: an equality as $eq, two
	// clauses as a $and, sorted by operator
	for _, tc := range []struct {
		name   string
		filter bson.D
		hint   string
		want   any // nil: no filter
	}{
		{"residual", bson.D{{Key: "a", Value: 3}, {Key: "b", Value: gt(50)}}, "a_1", bson.D{{Key: "b", Value: gt(50)}}},
		{"all exact", bson.D{{Key: "a", Value: 3}}, "a_1", nil},
		{"range exact", bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 3}, {Key: "$lte", Value: 4}}}, {Key: "b", Value: 7}}, "a_1", bson.D{{Key: "b", Value: eq(7)}}},
		{"_id range", bson.D{{Key: "_id", Value: gt(95)}}, "_id_", nil},
		{"null is not exact", bson.D{{Key: "a", Value: nil}}, "a_1", bson.D{{Key: "a", Value: eq(nil)}}},
		{"multikey", bson.D{{Key: "b", Value: gt(1)}, {Key: "t", Value: 3}}, "t_1", bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "t", Value: eq(3)}}, bson.D{{Key: "b", Value: gt(1)}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := bson.D{{Key: "find", Value: "residual"}, {Key: "filter", Value: tc.filter}, {Key: "hint", Value: tc.hint}}
			out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range [][]string{{"queryPlanner", "winningPlan"}, {"executionStats", "executionStages"}} {
				fetch := out.Lookup(path...).Document()
				if fetch.Lookup("stage").StringValue() != "FETCH" {
					t.Fatalf("%v is not a FETCH: %s", path, fetch)
				}
				got, err := fetch.LookupErr("filter")
				switch {
				case tc.want == nil && err == nil:
					t.Errorf("%v: FETCH filter %s, want none", path, got)
				case tc.want != nil && err != nil:
					t.Errorf("%v: no FETCH filter, want %v", path, tc.want)
				case tc.want != nil && !bytes.Equal(got.Document(), mustRaw(t, tc.want)):
					t.Errorf("%v: FETCH filter %s, want %v", path, got, tc.want)
				}
			}
		})
	}
}

// TestExplainParsedQuery checks parsedQuery for the filters whose
// serialization needs more than the query package: $where's code, $text's
// language (the text index's default when the query names none), and a
// $in sorted under the query's collation.
func TestExplainParsedQuery(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	coll := db.Collection("parsed")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "s", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "s", Value: "text"}}, Options: options.Index().SetDefaultLanguage("spanish")}); err != nil {
		t.Fatal(err)
	}
	text := func(lang string) bson.D {
		return bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "café"}, {Key: "$language", Value: lang}, {Key: "$caseSensitive", Value: false}, {Key: "$diacriticSensitive", Value: false}}}}
	}
	for _, tc := range []struct {
		name      string
		filter    bson.D
		collation bson.D
		want      bson.D
	}{
		{"$where", bson.D{{Key: "$where", Value: "this.s == 'x'"}}, nil, bson.D{{Key: "$where", Value: bson.JavaScript("this.s == 'x'")}}},
		{"$text", bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "café"}}}}, nil, text("spanish")},
		{"$text $language", bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "café"}, {Key: "$language", Value: "en"}}}}, nil, text("en")},
		{"$in collated", bson.D{{Key: "s", Value: bson.D{{Key: "$in", Value: bson.A{"10", "9", "2"}}}}},
			bson.D{{Key: "locale", Value: "en"}, {Key: "numericOrdering", Value: true}},
			bson.D{{Key: "s", Value: bson.D{{Key: "$in", Value: bson.A{"2", "9", "10"}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := bson.D{{Key: "find", Value: "parsed"}, {Key: "filter", Value: tc.filter}}
			if tc.collation != nil {
				cmd = append(cmd, bson.E{Key: "collation", Value: tc.collation})
			}
			out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			want, _ := bson.Marshal(tc.want)
			if got := out.Lookup("queryPlanner", "parsedQuery").Document(); !bytes.Equal(got, want) {
				t.Errorf("parsedQuery %s, want %s", got, bson.Raw(want))
			}
		})
	}
}

// TestExplainMatchStage checks that an aggregate's explain shows a $match
// that stays in the pipeline as MongoDB serializes its normalized filter.
func TestExplainMatchStage(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	if _, err := db.Collection("matchstage").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	pipeline := bson.A{
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$a"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		bson.D{{Key: "$match", Value: bson.D{{Key: "n", Value: 2}, {Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{3, 1}}}}}}},
	}
	out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "matchstage"}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	stages, _ := out.Lookup("stages").Array().Values()
	// an equality sorts before a $in (MatchType's order), whatever the paths
	want, _ := bson.Marshal(bson.D{{Key: "$and", Value: bson.A{
		bson.D{{Key: "n", Value: bson.D{{Key: "$eq", Value: 2}}}},
		bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{1, 3}}}}},
	}}})
	if got, ok := stages[len(stages)-1].Document().Lookup("$match").DocumentOK(); !ok || !bytes.Equal(got, want) {
		t.Errorf("last stage %s, want {$match: %s}", stages[len(stages)-1], bson.Raw(want))
	}
}

// TestExplainTriviallyTrueExpr: an $expr of a constant that is true is
// optimized away (ExprMatchExpression's optimizer makes it an empty $and),
// so the COLLSCAN of a find or of an aggregate's $match shows no filter,
// and beside a $expr of a field only that one is left
// (jstests/aggregation/sources/match/trivial_match_expr.js); one that is
// false is kept, as {$const: value}.
func TestExplainTriviallyTrueExpr(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	if _, err := db.Collection("trivialexpr").InsertMany(ctx, []any{
		bson.D{{Key: "foo", Value: 123}, {Key: "bar", Value: "123"}},
		bson.D{{Key: "foo", Value: 0}, {Key: "bar", Value: "0"}},
	}); err != nil {
		t.Fatal(err)
	}
	plan := func(t *testing.T, cmd bson.D) bson.Raw {
		t.Helper()
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if wp, ok := out.Lookup("queryPlanner", "winningPlan").DocumentOK(); ok {
			return wp
		}
		return out.Lookup("stages", "0", "$cursor", "queryPlanner", "winningPlan").Document()
	}
	find := func(filter bson.D) bson.D {
		return bson.D{{Key: "find", Value: "trivialexpr"}, {Key: "filter", Value: filter}}
	}
	aggregate := func(stages ...bson.D) bson.D {
		p := bson.A{}
		for _, s := range stages {
			p = append(p, bson.D{{Key: "$match", Value: s}})
		}
		return bson.D{{Key: "aggregate", Value: "trivialexpr"}, {Key: "pipeline", Value: p}, {Key: "cursor", Value: bson.D{}}}
	}
	exprOf := func(v any) bson.D { return bson.D{{Key: "$expr", Value: v}} }
	for _, tc := range []struct {
		name string
		cmd  bson.D
		want bson.D // the winning plan's filter, nil for none
	}{
		{"find true", find(exprOf(true)), nil},
		{"find truthy string", find(exprOf("foo")), nil},
		{"find $and of truthy constants", find(bson.D{{Key: "$and", Value: bson.A{exprOf(true), exprOf("foo")}}}), nil},
		{"find field", find(exprOf("$foo")), exprOf("$foo")},
		{"find truthy constant and field", find(bson.D{{Key: "$and", Value: bson.A{exprOf("foo"), exprOf("$foo")}}}), exprOf("$foo")},
		{"aggregate true", aggregate(exprOf(true)), nil},
		{"aggregate two truthy constants", aggregate(exprOf(true), exprOf("foo")), nil},
		{"aggregate truthy constant and field", aggregate(exprOf("foo"), exprOf("$foo")), exprOf("$foo")},
		// a constant that is false stays, shown as ExpressionConstant
		// serializes, {$const: value}
		{"find false", find(exprOf(false)), exprOf(bson.D{{Key: "$const", Value: false}})},
		{"find comparison of constants", find(exprOf(bson.D{{Key: "$eq", Value: bson.A{1, 2}}})), exprOf(bson.D{{Key: "$const", Value: false}})},
		{"aggregate false", aggregate(exprOf(false)), exprOf(bson.D{{Key: "$const", Value: false}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wp := plan(t, tc.cmd)
			got, has := wp.Lookup("filter").DocumentOK()
			if tc.want == nil {
				if has {
					t.Fatalf("winning plan %s has a filter, want none", wp)
				}
				return
			}
			want, _ := bson.Marshal(tc.want)
			if !bytes.Equal(got, want) {
				t.Fatalf("winning plan %s, want filter %s", wp, bson.Raw(want))
			}
		})
	}
}

// TestExplainLookupFigures: from verbosity executionStats a $lookup
// reports the work of its reads of the foreign collection after its spec,
// as MongoDB (5.0 on) does: totalDocsExamined, totalKeysExamined,
// collectionScans (its reads that scanned the collection) and indexesUsed
// (each index once), then nReturned and executionTimeMillisEstimate; at
// queryPlanner it shows its spec alone.
// https://www.mongodb.com/docs/v7.0/reference/explain-results/#execution-plan-statistics-for-query-with--lookup-pipeline-stage
func TestExplainLookupFigures(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	outer, inner := db.Collection("lookupfig_outer"), db.Collection("lookupfig_inner")
	if _, err := outer.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "fk", Value: 3}}, bson.D{{Key: "_id", Value: 2}, {Key: "fk", Value: 4}}}); err != nil {
		t.Fatal(err)
	}
	docs := make([]any, 10)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i}}
	}
	if _, err := inner.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	lookup := func(spec bson.D) mongo.Pipeline {
		return mongo.Pipeline{{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}, {{Key: "$lookup", Value: spec}}}
	}
	for _, tc := range []struct {
		name string
		spec bson.D
		want string // the stage's fields after its spec
	}{
		{"index", bson.D{{Key: "from", Value: inner.Name()}, {Key: "localField", Value: "fk"}, {Key: "foreignField", Value: "k"}, {Key: "as", Value: "j"}},
			`totalDocsExamined: {"$numberLong":"2"}, totalKeysExamined: {"$numberLong":"2"}, collectionScans: {"$numberLong":"0"}, indexesUsed: ["k_1"], nReturned: {"$numberLong":"2"}`},
		{"_id", bson.D{{Key: "from", Value: inner.Name()}, {Key: "localField", Value: "fk"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "j"}},
			`totalDocsExamined: {"$numberLong":"2"}, totalKeysExamined: {"$numberLong":"2"}, collectionScans: {"$numberLong":"0"}, indexesUsed: ["_id_"], nReturned: {"$numberLong":"2"}`},
		{"scan", bson.D{{Key: "from", Value: inner.Name()}, {Key: "localField", Value: "fk"}, {Key: "foreignField", Value: "none"}, {Key: "as", Value: "j"}},
			`totalDocsExamined: {"$numberLong":"20"}, totalKeysExamined: {"$numberLong":"0"}, collectionScans: {"$numberLong":"2"}, indexesUsed: [], nReturned: {"$numberLong":"2"}`},
		{"pipeline", bson.D{{Key: "from", Value: inner.Name()}, {Key: "let", Value: bson.D{{Key: "v", Value: "$fk"}}}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "k", Value: bson.D{{Key: "$lt", Value: 2}}}}}},
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: inner.Name()}, {Key: "localField", Value: "k"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "n"}}}},
		}}, {Key: "as", Value: "j"}},
			`totalDocsExamined: {"$numberLong":"8"}, totalKeysExamined: {"$numberLong":"8"}, collectionScans: {"$numberLong":"0"}, indexesUsed: ["_id_","k_1"], nReturned: {"$numberLong":"2"}`},
		{"missing collection", bson.D{{Key: "from", Value: "lookupfig_none"}, {Key: "localField", Value: "fk"}, {Key: "foreignField", Value: "k"}, {Key: "as", Value: "j"}},
			`totalDocsExamined: {"$numberLong":"0"}, totalKeysExamined: {"$numberLong":"0"}, collectionScans: {"$numberLong":"0"}, indexesUsed: [], nReturned: {"$numberLong":"2"}`},
	} {
		var reply bson.Raw
		err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: outer.Name()}, {Key: "pipeline", Value: lookup(tc.spec)}, {Key: "cursor", Value: bson.D{}}}}, {Key: "verbosity", Value: "executionStats"}}).Decode(&reply)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		stage := reply.Lookup("stages", "1").Document()
		elems, _ := stage.Elements()
		var got []string
		for _, e := range elems[1 : len(elems)-1] { // past the spec, before executionTimeMillisEstimate
			got = append(got, e.Key()+": "+e.Value().String())
		}
		if s := strings.Join(got, ", "); s != tc.want {
			t.Errorf("%s: got %s\nwant %s", tc.name, s, tc.want)
		}
		if last := elems[len(elems)-1].Key(); last != "executionTimeMillisEstimate" {
			t.Errorf("%s: last field %s", tc.name, last)
		}
	}
	var reply bson.Raw
	err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: outer.Name()}, {Key: "pipeline", Value: lookup(bson.D{{Key: "from", Value: inner.Name()}, {Key: "localField", Value: "fk"}, {Key: "foreignField", Value: "k"}, {Key: "as", Value: "j"}})}, {Key: "cursor", Value: bson.D{}}}}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&reply)
	if err != nil {
		t.Fatal(err)
	}
	if elems, _ := reply.Lookup("stages", "1").Document().Elements(); len(elems) != 1 {
		t.Errorf("queryPlanner $lookup: %v", reply.Lookup("stages", "1"))
	}
	// The spec as DocumentSourceLookUp serializes it (from, as,
	// localField, foreignField, let, pipeline), and the $unwind of as it
	// absorbed shown inside it as unwinding, not as a stage of its own.
	for _, tc := range []struct {
		pipeline mongo.Pipeline
		want     string
	}{
		{mongo.Pipeline{
			{{Key: "$lookup", Value: bson.D{{Key: "localField", Value: "fk"}, {Key: "as", Value: "j"}, {Key: "foreignField", Value: "k"}, {Key: "from", Value: inner.Name()}}}},
			{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$j"}, {Key: "includeArrayIndex", Value: "i"}}}},
			{{Key: "$limit", Value: 5}},
		}, `[{"$lookup": {"from": "lookupfig_inner","as": "j","localField": "fk","foreignField": "k","unwinding": {"preserveNullAndEmptyArrays": false,"includeArrayIndex": "i"}}},{"$limit": {"$numberLong":"5"}}]`},
		{mongo.Pipeline{
			{{Key: "$lookup", Value: bson.D{{Key: "pipeline", Value: bson.A{}}, {Key: "as", Value: "j"}, {Key: "from", Value: inner.Name()}}}},
			{{Key: "$unwind", Value: "$other"}},
		}, `[{"$lookup": {"from": "lookupfig_inner","as": "j","let": {},"pipeline": []}},{"$unwind": {"path": "$other"}}]`},
	} {
		var reply bson.Raw
		err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: outer.Name()}, {Key: "pipeline", Value: tc.pipeline}, {Key: "cursor", Value: bson.D{}}}}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&reply)
		if err != nil {
			t.Fatal(err)
		}
		stages, _ := reply.Lookup("stages").Array().Values()
		var got []string
		for _, st := range stages[1:] {
			got = append(got, st.String())
		}
		if s := "[" + strings.Join(got, ",") + "]"; s != tc.want {
			t.Errorf("got %s\nwant %s", s, tc.want)
		}
	}
}
