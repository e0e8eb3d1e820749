"""A forced step down of the one-member replica set through pymongo,
connected directly: a write to the secondary fails with
NotWritablePrimary, reads go on, and the member is elected again when its
stepdown period ends."""

import sys
import time

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from lib.checks import eq

client = MongoClient(sys.argv[1], directConnection=True)
admin = client.admin
client.drop_database("e2e_py_stepdown")
coll = client["e2e_py_stepdown"]["c"]
coll.insert_many([{"_id": 1}, {"_id": 2}])


def code_of(fn):
    """The code fn fails with (pymongo 3 raises a not-primary error as a
    connection failure, the code in its details), 0 if it does not."""
    try:
        fn()
    except PyMongoError as e:
        return getattr(e, "code", None) or (getattr(e, "details", None) or {}).get("code")
    return 0


eq(code_of(lambda: admin.command("replSetStepDown", 10, secondaryCatchUpPeriodSecs=0)), 262, "step down without force")
admin.command("replSetStepDown", 1, force=True)
hello = admin.command("hello")
eq((hello["isWritablePrimary"], hello["secondary"], "primary" in hello), (False, True, False), "hello of the secondary")
eq(admin.command("replSetGetStatus")["myState"], 2, "replSetGetStatus myState")
eq(code_of(lambda: coll.insert_one({"_id": 3})), 10107, "insert on the secondary")
eq(coll.count_documents({}), 2, "count on the secondary")
# elected at the end of its 1-second stepdown period
deadline = time.monotonic() + 10
while not admin.command("hello")["isWritablePrimary"]:
    if time.monotonic() > deadline:
        raise AssertionError("not elected 10 s after a 1 s step down")
    time.sleep(0.01)
coll.insert_one({"_id": 3})
eq(coll.count_documents({}), 3, "count after the election")
client.drop_database("e2e_py_stepdown")
