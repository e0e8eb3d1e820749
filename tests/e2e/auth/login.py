"""pymongo logged in with a user URI (authSource e2e_auth): its readWrite
role lets it write and read e2e_auth, and nothing else."""

import sys

from pymongo import MongoClient
from pymongo.errors import OperationFailure

client = MongoClient(sys.argv[1])
db = client["e2e_auth"]
db.items.insert_one({"_id": 2, "name": "ink"})
if db.items.find_one({"_id": 2})["name"] != "ink":
    raise AssertionError("find_one after insert")
st = db.command("connectionStatus")
users = st["authInfo"]["authenticatedUsers"]
if users != [{"user": "appuser", "db": "e2e_auth"}]:
    raise AssertionError("connectionStatus: %r" % st)
try:
    client["e2e_other"].items.insert_one({"_id": 1})
    raise AssertionError("insert elsewhere succeeded")
except OperationFailure as e:
    if e.code != 13:
        raise AssertionError("insert elsewhere: code %r" % e.code)
