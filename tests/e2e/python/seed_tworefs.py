"""Seed pattern through pymongo: two-way references, reassigning a task on both
sides. See examples/tworefs.
"""

import sys

from bson import ObjectId
from pymongo import ASCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_tworefs")
d = client["e2e_py_seed_tworefs"]

kate, joe, lesson, grade, books = ObjectId(), ObjectId(), ObjectId(), ObjectId(), ObjectId()
d.tasks.insert_many([
    {"_id": lesson, "description": "Write lesson plan", "owner": kate},
    {"_id": grade, "description": "Grade homework", "owner": kate},
    {"_id": books, "description": "Order books", "owner": joe}])
d.people.insert_many([{"_id": kate, "name": "Kate Monster", "tasks": [lesson, grade]},
                      {"_id": joe, "name": "Joe Bloggs", "tasks": [books]}])
d.tasks.create_index([("owner", ASCENDING)])
d.people.create_index([("tasks", ASCENDING)])
eq(d.people.find_one({"tasks": lesson})["name"], "Kate Monster", "owner from the people side")
eq(d.tasks.count_documents({"owner": kate}), 2, "tasks from the task side")
ixscan(d.tasks, {"owner": kate}, None, "owner_1")
ixscan(d.people, {"tasks": lesson}, None, "tasks_1")
d.people.update_one({"_id": kate}, {"$pull": {"tasks": lesson}})
d.people.update_one({"_id": joe}, {"$addToSet": {"tasks": lesson}})
d.tasks.update_one({"_id": lesson}, {"$set": {"owner": joe}})
eq(d.people.find_one({"tasks": lesson})["name"], "Joe Bloggs", "people side after reassign")
eq((d.tasks.count_documents({"owner": joe}), d.tasks.count_documents({"owner": kate})), (2, 1), "task side after reassign")
