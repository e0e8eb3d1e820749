"""Seed pattern through pymongo: a FIFO work queue claimed with
find_one_and_update (the findAndModify command) on a standard and a capped
collection. See examples/queue.
"""

import datetime
import sys

from pymongo import ASCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_queue")
d = client["e2e_py_seed_queue"]

def fill(q, messages):
    q.create_index([("state", ASCENDING), ("created", ASCENDING)])
    # newest first, so only the sort on created makes the queue FIFO
    for i in reversed(range(len(messages))):
        q.insert_one({"state": 0, "created": datetime.datetime(2011, 2, 24, 16, 29, i), "message": messages[i]})


def drain(q):
    got = []
    while True:
        item = q.find_one_and_update({"state": 0}, {"$set": {"state": 1}}, sort=[("created", ASCENDING)])
        if item is None:
            return got
        eq(item["state"], 0, "find_one_and_update returns the item before the update")
        got.append(item["message"])


fill(d.queue, ["hello world", "second", "third"])
ixscan(d.queue, {"state": 0}, {"created": 1}, "state_1_created_1")
eq(drain(d.queue), ["hello world", "second", "third"], "FIFO claims")
fill(d.queue, ["fourth", "fifth"])
eq(d.queue.find_one_and_delete({"state": 0}, sort=[("created", ASCENDING)])["message"], "fourth", "claim and remove")

d.create_collection("capped_queue", capped=True, size=1 << 20)
fill(d.capped_queue, ["alpha", "beta", "gamma"])
ixscan(d.capped_queue, {"state": 0}, {"created": 1}, "state_1_created_1")
eq(drain(d.capped_queue), ["alpha", "beta", "gamma"], "FIFO claims on a capped collection")
d.create_collection("small_queue", capped=True, size=4096, max=3)
fill(d.small_queue, ["m1", "m2", "m3", "m4", "m5"])
eq([x["message"] for x in d.small_queue.find().sort("created")], ["m1", "m2", "m3"],
   "a full capped collection drops its oldest inserts, processed or not")
