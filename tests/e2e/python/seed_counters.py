"""Seed pattern through pymongo: pre-allocated day counters updated with $inc,
a collection per period. See examples/counters.
"""

import sys

from pymongo import ASCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_counters")
d = client["e2e_py_seed_counters"]

nov, dec = d["sites-nov"], d["sites-dec"]
page = {"base": "org.mongodb", "path": "/"}


def template(days):
    return {"base": "org.mongodb", "path": "/", "total": 0, "days": dict((str(i), 0) for i in range(1, days + 1))}


for c in (nov, dec):
    c.create_index([("base", ASCENDING), ("path", ASCENDING)], unique=True)
nov.insert_one(template(30))
dec.insert_one(template(31))
before = nov.find_one(page)
for _ in range(3):
    nov.update_one(page, {"$inc": {"total": 1, "days.5": 1}})
doc = nov.find_one(page)
eq((doc["total"], doc["days"]["5"], list(doc["days"]) == list(before["days"])), (3, 3, True),
   "counters changed in place, no field added")
ixscan(nov, page, None, "base_1_path_1")
nov.update_one(page, {"$inc": {"days.31": 1}})
eq(len(nov.find_one(page)["days"]), 31, "a counter that was not pre-allocated adds a field")
nov.drop()
eq(d.list_collection_names(), ["sites-dec"], "a period is dropped with its collection")
