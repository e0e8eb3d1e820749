"""Seed pattern through pymongo: many-to-many with an indexed array of
category ids. See examples/manytomany.
"""

import sys

from bson import ObjectId
from pymongo import ASCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_manytomany")
d = client["e2e_py_seed_manytomany"]

epiphytes, greenhouse, orchid = ObjectId(), ObjectId(), ObjectId()
d.categories.insert_many([{"_id": epiphytes, "title": "Epiphytes"}, {"_id": greenhouse, "title": "Greenhouse flowers"}])
d.products.insert_many([
    {"_id": orchid, "name": "Dragon Orchid", "category_ids": [epiphytes, greenhouse]},
    {"name": "Staghorn Fern", "category_ids": [epiphytes]},
    {"name": "Tea Rose", "category_ids": [greenhouse]}])
d.products.create_index([("category_ids", ASCENDING)])
eq([p["name"] for p in d.products.find({"category_ids": epiphytes}).sort("name")],
   ["Dragon Orchid", "Staghorn Fern"], "products of a category")
ixscan(d.products, {"category_ids": epiphytes}, None, "category_ids_1")
product = d.products.find_one({"_id": orchid})
eq([c["title"] for c in d.categories.find({"_id": {"$in": product["category_ids"]}}).sort("title")],
   ["Epiphytes", "Greenhouse flowers"], "categories of a product")
