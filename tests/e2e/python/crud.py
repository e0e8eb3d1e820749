"""CRUD round trip through pymongo (3.11 and 4.x): insert, find with
filter/projection/sort/skip/limit, update with $set/$inc, replace, delete,
count_documents/estimated_document_count, distinct, find_one_and_*,
list_collection_names, rename, drop and drop_database."""

import sys

from pymongo import ASCENDING, DESCENDING, MongoClient, ReturnDocument

from lib.checks import eq


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_crud")
d = client["e2e_py_crud"]
c = d["people"]

# insert
eq(c.insert_many([
    {"_id": 1, "name": "ann", "age": 31, "city": "oslo"},
    {"_id": 2, "name": "bob", "age": 25, "city": "rome"},
    {"_id": 3, "name": "cy", "age": 40, "city": "oslo"},
    {"_id": 4, "name": "dee", "age": 25, "city": "lima"},
]).inserted_ids, [1, 2, 3, 4], "insert_many inserted_ids")
eq(c.insert_one({"_id": 5, "name": "eve", "age": 19, "city": "rome"}).inserted_id, 5, "insert_one inserted_id")

# find
eq(list(c.find({"city": "oslo"}, {"_id": 0, "name": 1}).sort("age", DESCENDING)),
   [{"name": "cy"}, {"name": "ann"}], "find filter+projection+sort")
eq(list(c.find({}, {"name": 1}).sort([("age", ASCENDING), ("_id", ASCENDING)]).skip(1).limit(2)),
   [{"_id": 2, "name": "bob"}, {"_id": 4, "name": "dee"}], "find sort+skip+limit")
eq([x["_id"] for x in c.find({"age": {"$gte": 25, "$lt": 40}}).sort("_id")], [1, 2, 4], "find range filter")
eq(c.find_one({"_id": 3}, {"city": 1, "_id": 0}), {"city": "oslo"}, "find_one projection")
eq(c.find_one({"_id": 42}), None, "find_one no match")

# update and replace
r = c.update_one({"_id": 2}, {"$set": {"city": "oslo"}, "$inc": {"age": 1}})
eq((r.matched_count, r.modified_count), (1, 1), "update_one counts")
eq(c.find_one({"_id": 2}), {"_id": 2, "name": "bob", "age": 26, "city": "oslo"}, "after update_one")
r = c.update_many({"city": "oslo"}, {"$inc": {"visits": 1}})
eq((r.matched_count, r.modified_count), (3, 3), "update_many counts")
r = c.update_one({"_id": 99}, {"$set": {"name": "zed"}}, upsert=True)
eq((r.matched_count, r.upserted_id), (0, 99), "upsert")
r = c.replace_one({"_id": 4}, {"name": "dee", "age": 26})
eq((r.matched_count, r.modified_count), (1, 1), "replace_one counts")
eq(c.find_one({"_id": 4}), {"_id": 4, "name": "dee", "age": 26}, "after replace_one")

# counting and distinct
eq(c.count_documents({"city": "oslo"}), 3, "count_documents filter")
eq(c.count_documents({}), 6, "count_documents all")
eq(c.estimated_document_count(), 6, "estimated_document_count")
eq(sorted(c.distinct("city")), ["oslo", "rome"], "distinct")
eq(sorted(c.distinct("name", {"age": {"$lt": 30}})), ["bob", "dee", "eve"], "distinct with filter")

# find_one_and_*
eq(c.find_one_and_update({"_id": 5}, {"$set": {"city": "lima"}}, projection={"_id": 0, "city": 1},
                         return_document=ReturnDocument.AFTER), {"city": "lima"}, "find_one_and_update after")
eq(c.find_one_and_update({"name": "ann"}, {"$inc": {"age": 1}}),
   {"_id": 1, "name": "ann", "age": 31, "city": "oslo", "visits": 1}, "find_one_and_update before")
eq(c.find_one({"_id": 1})["age"], 32, "find_one_and_update applied")
eq(c.find_one_and_replace({"_id": 5}, {"name": "eve", "age": 20}, return_document=ReturnDocument.AFTER),
   {"_id": 5, "name": "eve", "age": 20}, "find_one_and_replace")
eq(c.find_one_and_delete({"_id": 99}), {"_id": 99, "name": "zed"}, "find_one_and_delete")
eq(c.find_one_and_delete({"_id": 99}), None, "find_one_and_delete no match")

# delete
eq(c.delete_one({"_id": 1}).deleted_count, 1, "delete_one")
eq(c.delete_many({"age": {"$lt": 30}}).deleted_count, 3, "delete_many")
eq(list(c.find()), [{"_id": 3, "name": "cy", "age": 40, "city": "oslo", "visits": 1}], "left after deletes")

# collections
d.create_collection("things")
d["stats-2011"].insert_one({"_id": "x", "n": 1})
d["sites-nov"].insert_one({"_id": 1})
eq(sorted(d.list_collection_names()), ["people", "sites-nov", "stats-2011", "things"], "list_collection_names")
eq([x["name"] for x in d.list_collections(filter={"name": "things"})], ["things"], "list_collections filter")
d["stats-2011"].rename("stats-2012")
eq(sorted(d.list_collection_names()), ["people", "sites-nov", "stats-2012", "things"], "after rename")
eq(d["stats-2012"].find_one(), {"_id": "x", "n": 1}, "renamed collection keeps its documents")
d["things"].drop()
eq(sorted(d.list_collection_names()), ["people", "sites-nov", "stats-2012"], "after drop")

# drop_database
client.drop_database("e2e_py_crud")
eq(d.list_collection_names(), [], "no collections after drop_database")
eq("e2e_py_crud" in client.list_database_names(), False, "dropped database is not listed")
