"""Cursor batches: batchSize 0 gives an empty first batch and an open
cursor that getMore reads on; listCollections and listIndexes honour
cursor.batchSize and continue through getMore."""

import sys

from pymongo import MongoClient

from lib.checks import eq


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_batches")
db = client["e2e_py_batches"]
c = db["c"]
c.insert_many([{"_id": i} for i in range(10)])

eq([d["_id"] for d in c.find().sort("_id").batch_size(0)], list(range(10)), "batch_size(0) is the server's default")

first = db.command({"find": "c", "sort": {"_id": 1}, "batchSize": 0})["cursor"]
eq((len(first["firstBatch"]), first["id"] != 0), (0, True), "find batchSize 0: empty first batch, open cursor")
more = db.command({"getMore": first["id"], "collection": "c", "batchSize": 4})["cursor"]
eq([d["_id"] for d in more["nextBatch"]], [0, 1, 2, 3], "getMore after batchSize 0")
db.command({"killCursors": "c", "cursors": [first["id"]]})

for name in ["d", "e", "f", "g"]:
    db.create_collection(name)
eq(sorted(db.list_collection_names()), ["c", "d", "e", "f", "g"], "list_collection_names")
listed = db.command({"listCollections": 1, "nameOnly": True, "cursor": {"batchSize": 2}})["cursor"]
eq((list(listed.keys())[:2], len(listed["firstBatch"])), (["id", "ns"], 2), "listCollections batch of 2")
names = [d["name"] for d in listed["firstBatch"]]
more = db.command({"getMore": listed["id"], "collection": "$cmd.listCollections"})["cursor"]
names += [d["name"] for d in more["nextBatch"]]
eq((sorted(names), more["id"]), (["c", "d", "e", "f", "g"], 0), "listCollections getMore")

c.create_index("a")
c.create_index("b")
ixs = db.command({"listIndexes": "c", "cursor": {"batchSize": 1}})["cursor"]
eq(ixs["ns"], "e2e_py_batches.c", "listIndexes ns")
more = db.command({"getMore": ixs["id"], "collection": "c"})["cursor"]
eq([d["name"] for d in ixs["firstBatch"] + more["nextBatch"]], ["_id_", "a_1", "b_1"], "listIndexes getMore")
eq([ix["name"] for ix in c.list_indexes()], ["_id_", "a_1", "b_1"], "list_indexes")

client.drop_database("e2e_py_batches")
