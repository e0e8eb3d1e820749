"""A duplicate _id raises DuplicateKeyError (code 11000) with keyValue in its
details, from insert_one and from ordered and unordered insert_many, and the
rejected write leaves the stored document unchanged."""

import sys

from pymongo import MongoClient
from pymongo.errors import BulkWriteError, DuplicateKeyError

from lib.checks import eq


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_dupkey")
c = client["e2e_py_dupkey"]["items"]
c.insert_one({"_id": 1, "v": "first"})

try:
    c.insert_one({"_id": 1, "v": "second"})
    raise AssertionError("insert_one duplicate: no error")
except DuplicateKeyError as e:
    eq(e.code, 11000, "insert_one code")
    eq(e.details.get("keyValue"), {"_id": 1}, "insert_one keyValue")
    if "E11000" not in str(e):
        raise AssertionError("insert_one message lacks E11000: %s" % e)
eq(c.find_one({"_id": 1}), {"_id": 1, "v": "first"}, "original document kept")

try:
    c.insert_many([{"_id": 2}, {"_id": 1}, {"_id": 3}])
    raise AssertionError("ordered insert_many: no error")
except BulkWriteError as e:
    errs = e.details["writeErrors"]
    eq([(w["index"], w["code"]) for w in errs], [(1, 11000)], "ordered insert_many write errors")
    eq(errs[0].get("keyValue"), {"_id": 1}, "ordered insert_many keyValue")
    eq(e.details["nInserted"], 1, "ordered insert_many nInserted")
eq([x["_id"] for x in c.find({"_id": {"$in": [2, 3]}})], [2], "ordered insert_many stops at the error")

try:
    c.insert_many([{"_id": 4}, {"_id": 2}, {"_id": 5}], ordered=False)
    raise AssertionError("unordered insert_many: no error")
except BulkWriteError as e:
    eq([(w["index"], w["code"]) for w in e.details["writeErrors"]], [(1, 11000)], "unordered insert_many write errors")
    eq(e.details["nInserted"], 2, "unordered insert_many nInserted")
eq(c.count_documents({"_id": {"$in": [4, 5]}}), 2, "unordered insert_many continues past the error")

client.drop_database("e2e_py_dupkey")
