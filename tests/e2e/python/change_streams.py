"""Change streams through pymongo's watch(): a collection stream sees
insert, update (with updateDescription and the looked-up document),
replace and delete; resume_after a token continues with the next event;
a database stream sees the drop and ends with invalidate; and the client's
automatic resume survives its cursor being killed on the server."""

import sys

from pymongo import MongoClient

from lib.checks import eq

URI = sys.argv[1]
client = MongoClient(URI)
client.drop_database("e2e_py_cs")
db = client["e2e_py_cs"]
coll = db["events"]

with coll.watch(full_document="updateLookup", max_await_time_ms=2000) as stream:
    coll.insert_one({"_id": 1, "n": 1, "tags": ["a", "b"]})
    coll.update_one({"_id": 1}, {"$inc": {"n": 1}, "$push": {"tags": "c"}})
    coll.replace_one({"_id": 1}, {"x": True})
    coll.delete_one({"_id": 1})
    events = [stream.next() for _ in range(4)]
eq([e["operationType"] for e in events], ["insert", "update", "replace", "delete"], "operation types")
eq(events[0]["fullDocument"], {"_id": 1, "n": 1, "tags": ["a", "b"]}, "inserted document")
eq(events[1]["updateDescription"]["updatedFields"], {"n": 2, "tags.2": "c"}, "updatedFields")
eq(events[1]["updateDescription"]["removedFields"], [], "removedFields")
eq(events[2]["fullDocument"], {"_id": 1, "x": True}, "replacement")
eq(events[3]["documentKey"], {"_id": 1}, "deleted key")
eq(events[0]["ns"], {"db": "e2e_py_cs", "coll": "events"}, "ns")

# resume after the first event: the next is the update
with coll.watch(resume_after=events[0]["_id"]) as resumed:
    eq(resumed.next()["operationType"], "update", "resumed stream")

# the driver resumes by itself when the server loses its cursor
with coll.watch(max_await_time_ms=2000) as stream:
    coll.insert_one({"_id": 2})
    eq(stream.next()["documentKey"], {"_id": 2}, "before the kill")
    db.command("killCursors", "events", cursors=[stream._cursor.cursor_id])
    coll.insert_one({"_id": 3})
    eq(stream.next()["documentKey"], {"_id": 3}, "after the automatic resume")

with db.watch(max_await_time_ms=2000) as stream:
    db["other"].insert_one({"_id": 9})
    client.drop_database("e2e_py_cs")
    kinds = [stream.next()["operationType"] for _ in range(5)]
eq(kinds, ["insert", "drop", "drop", "dropDatabase", "invalidate"], "database stream")
print("change streams ok")
