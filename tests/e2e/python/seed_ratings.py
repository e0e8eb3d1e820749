"""Seed pattern through pymongo: a product's average rating aggregated from its
reviews and cached, or maintained with $set and $inc. See examples/ratings.
"""

import sys

from bson import ObjectId
from pymongo import ASCENDING, DESCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_ratings")
d = client["e2e_py_seed_ratings"]

pid, other = ObjectId(), ObjectId()
d.products.insert_many([{"_id": pid, "name": "Extra Large Wheel Barrow"}, {"_id": other, "name": "Trowel", "average_review": 1.0}])
d.reviews.create_index([("product_id", ASCENDING)])
d.reviews.insert_many([{"product_id": pid, "rating": r} for r in (5, 4, 4, 2)] + [{"product_id": other, "rating": 1}])
stats = list(d.reviews.aggregate([
    {"$match": {"product_id": pid}},
    {"$group": {"_id": "$product_id", "count": {"$sum": 1}, "total": {"$sum": "$rating"}, "average": {"$avg": "$rating"}}}]))
eq([(s["count"], s["total"], s["average"]) for s in stats], [(4, 15, 3.75)], "aggregated statistics")
d.products.update_one({"_id": pid}, {"$set": {"total_reviews": 4, "ratings_total": 15, "average_review": 3.75}})
ixscan(d.reviews, {"product_id": pid}, None, "product_id_1")
ratings = [r["rating"] for r in d.reviews.find({"product_id": pid}, {"rating": 1})]
eq(sum(ratings) / float(len(ratings)), 3.75, "application loop agrees")
p = d.products.find_one({"_id": pid})
d.reviews.insert_one({"product_id": pid, "rating": 5})
d.products.update_one({"_id": pid}, {
    "$set": {"average_review": (p["ratings_total"] + 5) / float(p["total_reviews"] + 1), "ratings_total": p["ratings_total"] + 5},
    "$inc": {"total_reviews": 1}})
q = d.products.find_one({"_id": pid})
eq((q["total_reviews"], q["ratings_total"], q["average_review"]), (5, 20, 4.0), "incremental statistics")
eq(d.products.find().sort("average_review", DESCENDING).limit(1)[0]["name"], "Extra Large Wheel Barrow", "sort by cached average")
