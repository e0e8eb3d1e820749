"""Seed pattern through pymongo: review votes recorded by one update guarded by
$ne. See examples/votes.
"""

import sys

from bson import ObjectId
from pymongo import MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_votes")
d = client["e2e_py_seed_votes"]

rid, alice, bob = ObjectId(), ObjectId(), ObjectId()
d.reviews.insert_one({"_id": rid, "text": "Sturdy barrow.", "helpful_votes": 0, "voter_ids": []})


def vote(voter):
    return d.reviews.update_one({"_id": rid, "voter_ids": {"$ne": voter}},
                                {"$push": {"voter_ids": voter}, "$inc": {"helpful_votes": 1}}).modified_count


eq([vote(alice), vote(alice), vote(bob)], [1, 0, 1], "$ne guard lets each voter vote once")
r = d.reviews.find_one({"_id": rid})
eq((r["helpful_votes"], len(r["voter_ids"])), (2, 2), "votes and voters agree")
edited = d.reviews.find_one({"_id": rid})
eq(vote(ObjectId()), 1, "a vote lands meanwhile")
edited["text"] = "Sturdy barrow, edited."
d.reviews.replace_one({"_id": rid}, edited)
eq(d.reviews.find_one({"_id": rid})["helpful_votes"], 2, "the replacement lost the third vote")
