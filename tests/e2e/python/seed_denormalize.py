"""Seed pattern through pymongo: denormalizing many->one and one->many, and the
host address in log messages. See examples/denormalize.
"""

import datetime
import sys

from bson import ObjectId
from pymongo import ASCENDING, DESCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_denormalize")
d = client["e2e_py_seed_denormalize"]

grommet, blade, sw = ObjectId(), ObjectId(), ObjectId()
d.parts.insert_many([
    {"_id": grommet, "name": "#4 grommet", "product_name": "left-handed smoke shifter", "product_catalog_number": 1234},
    {"_id": blade, "name": "fan blade assembly", "product_name": "left-handed smoke shifter", "product_catalog_number": 1234},
    {"_id": sw, "name": "power switch", "product_name": "left-handed smoke shifter", "product_catalog_number": 1234}])
d.products.insert_many([
    {"name": "left-handed smoke shifter", "catalog_number": 1234,
     "parts": [{"id": grommet, "name": "#4 grommet"}, {"id": blade, "name": "fan blade assembly"}, {"id": sw, "name": "power switch"}]},
    {"name": "right-handed smoke shifter", "catalog_number": 1235, "parts": [{"id": grommet, "name": "#4 grommet"}]}])
d.products.create_index([("catalog_number", ASCENDING)], unique=True)
d.products.create_index([("parts.id", ASCENDING)])
d.parts.create_index([("product_catalog_number", ASCENDING)])

product = d.products.find_one({"catalog_number": 1234})
part_ids = [p["id"] for p in product["parts"]]
eq(d.parts.count_documents({"_id": {"$in": part_ids}}), 3, "application-level join")
ixscan(d.products, {"catalog_number": 1234}, None, "catalog_number_1")

d.parts.update_one({"_id": grommet}, {"$set": {"name": "#4 rubber grommet"}})
r = d.products.update_many({"parts.id": grommet}, {"$set": {"parts.$.name": "#4 rubber grommet"}})
eq(r.modified_count, 2, "many->one: products rewritten for one part rename")
ixscan(d.products, {"parts.id": grommet}, None, "parts.id_1")
r = d.parts.update_many({"product_catalog_number": 1234}, {"$set": {"product_name": "smoke shifter, left"}})
eq(r.modified_count, 3, "one->many: parts rewritten for one product rename")
ixscan(d.parts, {"product_catalog_number": 1234}, None, "product_catalog_number_1")

d.logmsg.create_index([("ipaddr", ASCENDING), ("time", DESCENDING)])
for i in range(20):
    d.logmsg.insert_one({"time": datetime.datetime(2014, 3, 28, 9, 42, i), "message": "cpu is on fire!",
                         "ipaddr": "127.0.0.2" if i % 2 else "127.66.66.66"})
last = list(d.logmsg.find({"ipaddr": "127.66.66.66"}).sort("time", DESCENDING).limit(5))
eq((len(last), last[0]["time"]), (5, datetime.datetime(2014, 3, 28, 9, 42, 18)), "latest messages of an address")
ixscan(d.logmsg, {"ipaddr": "127.66.66.66"}, {"time": -1}, "ipaddr_1_time_-1")
