"""Seed pattern through pymongo: trees with a materialized path and with
ancestor lists (move, rename with 'ancestors.$' multi). See examples/trees.
"""

import datetime
import re
import sys

from bson import ObjectId
from pymongo import ASCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_trees")
d = client["e2e_py_seed_trees"]

# materialized path
d.forum.create_index([("thread_id", ASCENDING)])
d.forum.create_index([("path", ASCENDING)])
thread, root, soc = ObjectId(), ObjectId(), ObjectId()
root_path = str(root)
soc_path = root_path + ":" + str(soc)
d.forum.insert_many([
    {"_id": root, "depth": 0, "path": None, "created": datetime.datetime(2011, 2, 26, 17, 18), "username": "plotinus", "thread_id": thread},
    {"_id": soc, "depth": 1, "path": root_path, "created": datetime.datetime(2011, 2, 26, 17, 21), "username": "asophist", "thread_id": thread},
    {"depth": 2, "path": soc_path, "created": datetime.datetime(2011, 2, 26, 17, 22), "username": "daletheia", "thread_id": thread},
    {"depth": 1, "path": root_path, "created": datetime.datetime(2011, 2, 26, 17, 25), "username": "seuclid", "thread_id": thread}])
eq(d.forum.count_documents({"thread_id": thread}), 4, "whole thread")
ixscan(d.forum, {"thread_id": thread}, None, "thread_id_1")
eq([p["username"] for p in d.forum.find({"path": re.compile("^" + re.escape(root_path))}).sort("created")],
   ["asophist", "daletheia", "seuclid"], "subtree by prefix regex")
ixscan(d.forum, {"path": re.compile("^" + re.escape(soc_path))}, None, "path_1")

# ancestor lists
cats = d.categories
cats.create_index([("ancestors._id", ASCENDING)])


def generate_ancestors(_id, parent_id):
    ancestors = []
    while parent_id is not None:
        parent = cats.find_one({"_id": parent_id})
        ancestors.insert(0, {"_id": parent["_id"], "name": parent["name"], "slug": parent["slug"]})
        parent_id = parent["parent_id"]
    cats.update_one({"_id": _id}, {"$set": {"ancestors": ancestors}})


def add(name, parent_id):
    _id = cats.insert_one({"parent_id": parent_id, "name": name, "slug": name.lower(), "ancestors": []}).inserted_id
    generate_ancestors(_id, parent_id)
    return _id


def names(_id):
    return [a["name"] for a in cats.find_one({"_id": _id})["ancestors"]]


home = add("Home", None)
outdoors = add("Outdoors", home)
tools = add("Tools", outdoors)
seedlings = add("Seedlings", outdoors)
planters = add("Planters", seedlings)
gardening = add("Gardening", home)
eq(names(planters), ["Home", "Outdoors", "Seedlings"], "initial ancestors")

cats.update_one({"_id": outdoors}, {"$set": {"parent_id": gardening}})
generate_ancestors(outdoors, gardening)
for c in list(cats.find({"ancestors._id": outdoors})):
    generate_ancestors(c["_id"], c["parent_id"])
ixscan(cats, {"ancestors._id": outdoors}, None, "ancestors._id_1")
eq(names(planters), ["Home", "Gardening", "Outdoors", "Seedlings"], "ancestors after the move")

doc = cats.find_one({"_id": outdoors})
doc["name"] = "The Great Outdoors"
cats.replace_one({"_id": outdoors}, doc)
r = cats.update_many({"ancestors._id": outdoors},
                     {"$set": {"ancestors.$": {"_id": doc["_id"], "name": doc["name"], "slug": doc["slug"]}}})
eq((r.matched_count, r.modified_count), (3, 3), "positional multi update counts")
eq(names(planters), ["Home", "Gardening", "The Great Outdoors", "Seedlings"], "renamed ancestor")
