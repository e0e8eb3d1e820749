"""Seed pattern through pymongo: embed the steps of a how-to guide, reference
blog comments by an indexed post_id. See examples/embedding.
"""

import datetime
import sys

from bson import ObjectId
from pymongo import ASCENDING, DESCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_embedding")
d = client["e2e_py_seed_embedding"]

# embed: steps live inside the guide
d.guides.insert_one({"title": "How to soft-boil an egg", "steps": [
    {"desc": "Bring a pot of water to boil.", "materials": ["water", "eggs"]},
    {"desc": "Gently add the eggs and cook for four minutes.", "materials": ["egg timer"]},
    {"desc": "Cool the eggs under running water."}]})
eq(len(d.guides.find_one({"title": "How to soft-boil an egg"})["steps"]), 3, "one read returns all steps")
eq(d.guides.count_documents({"steps.materials": "egg timer"}), 1, "query into embedded steps")

# reference: comments point at their post
d.comments.create_index([("post_id", ASCENDING)])
herbs, tomatoes = ObjectId(), ObjectId()
d.posts.insert_many([{"_id": herbs, "title": "Cultivating herbs"}, {"_id": tomatoes, "title": "Staking tomatoes"}])
d.comments.insert_many([
    {"post_id": herbs, "posted": datetime.datetime(2011, 2, 26, 17, 0), "username": "zjones"},
    {"post_id": tomatoes, "posted": datetime.datetime(2011, 2, 26, 17, 1), "username": "kbanker"},
    {"post_id": herbs, "posted": datetime.datetime(2011, 2, 26, 17, 2), "username": "asophist"}])
eq(d.posts.find_one({"_id": herbs})["title"], "Cultivating herbs", "post")
eq([c["username"] for c in d.comments.find({"post_id": herbs}).sort("posted")], ["zjones", "asophist"], "comments of the post")
ixscan(d.comments, {"post_id": herbs}, None, "post_id_1")
eq([c["username"] for c in d.comments.find().sort("posted", DESCENDING).limit(2)], ["asophist", "kbanker"],
   "latest comments across posts")
