"""Seed pattern through pymongo: dynamic attributes with sparse indexes and
{n, v} pairs queried with $elemMatch. See examples/attributes.
"""

import sys

from pymongo import ASCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_attributes")
d = client["e2e_py_seed_attributes"]

d.products.insert_many([
    {"sku": "ebd-123", "name": "Hi-Fi Earbuds", "type": "Headphone", "attrs": {"color": "silver", "freq_low": 20, "freq_hi": 22000}},
    {"sku": "ebd-456", "name": "Bass Earbuds", "type": "Headphone", "attrs": {"color": "black", "freq_low": 40, "freq_hi": 18000}},
    {"sku": "ssd-456", "name": "Mini SSD Drive", "type": "Hard Drive", "attrs": {"interface": "SATA", "rotation": 7200, "form_factor": 2.5}}])
d.products.create_index([("attrs.freq_low", ASCENDING), ("attrs.freq_hi", ASCENDING)], sparse=True)
d.products.create_index([("attrs.rotation", ASCENDING)], sparse=True)
wide = {"attrs.freq_low": {"$lte": 20}, "attrs.freq_hi": {"$gte": 20000}}
eq([p["name"] for p in d.products.find(wide)], ["Hi-Fi Earbuds"], "range on sparse compound index")
ixscan(d.products, wide, None, "attrs.freq_low_1_attrs.freq_hi_1")
eq([p["name"] for p in d.products.find({"attrs.rotation": {"$gte": 5400}})], ["Mini SSD Drive"], "rotation")
ixscan(d.products, {"attrs.rotation": {"$gte": 5400}}, None, "attrs.rotation_1")
eq(len(list(d.products.find().hint("attrs.rotation_1"))), 1, "sparse index leaves out documents without the field")

d.products_nv.insert_many([
    {"name": "Hi-Fi Earbuds", "attrs": [{"n": "color", "v": "silver"}, {"n": "freq_low", "v": 20}]},
    {"name": "Bass Earbuds", "attrs": [{"n": "color", "v": "black"}, {"n": "freq_low", "v": 40}]},
    {"name": "Mini SSD Drive", "attrs": [{"n": "interface", "v": "SATA"}, {"n": "rotation", "v": 7200}]}])
d.products_nv.create_index([("attrs.n", ASCENDING), ("attrs.v", ASCENDING)])
silver = {"attrs": {"$elemMatch": {"n": "color", "v": "silver"}}}
eq([p["name"] for p in d.products_nv.find(silver)], ["Hi-Fi Earbuds"], "$elemMatch pair")
ixscan(d.products_nv, silver, None, "attrs.n_1_attrs.v_1")
eq([p["name"] for p in d.products_nv.find({"attrs.n": "rotation", "attrs.v": "SATA"})], ["Mini SSD Drive"],
   "without $elemMatch the pair may be split across elements")

# MongoDB 7.0's compound wildcard index: a known field before any attribute.
d.products.create_index([("type", ASCENDING), ("attrs.$**", ASCENDING)])
black_phones = {"type": "Headphone", "attrs.color": "black"}
eq([p["name"] for p in d.products.find(black_phones)], ["Bass Earbuds"], "type and any attribute")
ixscan(d.products, black_phones, None, "type_1_attrs.$**_1")
eq([p["name"] for p in d.products.find({"type": "Hard Drive"}).hint("type_1_attrs.$**_1")], ["Mini SSD Drive"],
   "the known field alone")
