"""Write concern and cluster time as a one-member replica set answers them:
w: 2 and an unknown tag apply the write and raise WriteConcernError (100
UnsatisfiableWriteConcern, 79 UnknownReplWriteConcern); j and w: 0 writes
are stored; replies carry $clusterTime and operationTime, and a causally
consistent session reads its own write. Generic arguments are validated
(maxTimeMS, apiVersion)."""

import sys
import time

from pymongo import MongoClient
from pymongo.errors import OperationFailure, WriteConcernError
from pymongo.write_concern import WriteConcern

from lib.checks import eq


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_wc")
db = client["e2e_py_wc"]

for w, code, name in [(2, 100, "UnsatisfiableWriteConcern"), ("tagX", 79, "UnknownReplWriteConcern")]:
    c = db.get_collection("wc_%s" % w, write_concern=WriteConcern(w=w))
    try:
        c.insert_one({"_id": 1})
        raise AssertionError("w=%r: no write concern error" % (w,))
    except WriteConcernError as e:
        eq(e.code, code, "w=%r code" % (w,))
        eq(e.details.get("codeName"), name, "w=%r codeName" % (w,))
    eq(db["wc_%s" % w].count_documents({"_id": 1}), 1, "w=%r write applied" % (w,))

j = db.get_collection("j", write_concern=WriteConcern(j=True))
j.insert_one({"_id": 1})
eq(db.j.count_documents({}), 1, "j=True write stored")

w0 = db.get_collection("w0", write_concern=WriteConcern(w=0))
eq(w0.insert_one({"_id": 1}).acknowledged, False, "w=0 unacknowledged")
deadline = time.time() + 5
while db.w0.count_documents({}) != 1:
    if time.time() > deadline:
        raise AssertionError("w=0 write never stored")
    time.sleep(0.01)

reply = db.command("ping")
if "$clusterTime" not in reply or "operationTime" not in reply:
    raise AssertionError("ping reply without cluster time: %r" % reply)

with client.start_session(causal_consistency=True) as s:
    db.causal.insert_one({"_id": 1}, session=s)
    written = s.operation_time
    if written is None or s.cluster_time is None:
        raise AssertionError("session learnt no operation or cluster time")
    eq(db.causal.find_one({"_id": 1}, session=s), {"_id": 1}, "causal read sees the write")
    if s.operation_time < written:
        raise AssertionError("operationTime went back: %r < %r" % (s.operation_time, written))

for args, code in [({"maxTimeMS": "x"}, 2), ({"maxTimeMS": -1}, 2), ({"apiVersion": "2"}, 322),
                   ({"shardVersion": []}, 238)]:
    try:
        db.command("find", "causal", **args)
        raise AssertionError("%r: no error" % args)
    except OperationFailure as e:
        eq(e.code, code, "%r code" % args)

client.drop_database("e2e_py_wc")
