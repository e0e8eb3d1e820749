"""Cursor iteration: 500 documents read with batch_size 7, every document
once and in order, with and without a limit; return_key gives the index
keys of an index scan, in batches too."""

import sys

from pymongo import MongoClient

from lib.checks import eq


N, B = 500, 7
client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_cursor")
c = client["e2e_py_cursor"]["c"]
# Insert in a scrambled order so that sorted reads do not rely on insertion order.
c.insert_many([{"_id": (i * 7919) % N, "i": (i * 7919) % N} for i in range(N)])

got = [doc["i"] for doc in c.find({}, {"_id": 0, "i": 1}).sort("i").batch_size(B)]
eq(got, list(range(N)), "find with batch_size returns every document once, in order")

got = [doc["i"] for doc in c.find({"i": {"$gte": 100}}).sort("i").batch_size(B).limit(20)]
eq(got, list(range(100, 120)), "limit 20 with batch_size 7")

c.create_index([("i", -1)])
got = list(c.find({"i": {"$lt": 10}}, return_key=True).sort("i", -1).batch_size(B))
eq(got, [{"i": i} for i in range(9, -1, -1)], "return_key over an index scan")

client.drop_database("e2e_py_cursor")
