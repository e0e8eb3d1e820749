"""DDL in transactions through pymongo (MongoDB manual, Transactions >
Operations > Create Collections and Indexes in a Transaction): collections
and indexes a transaction creates, explicitly or by a write, are invisible
outside until the commit and gone after an abort; explicit creation needs
read concern "local"; other DDL fails with OperationNotSupportedInTransaction
(263) and aborts the transaction."""

import sys

from pymongo import MongoClient
from pymongo.errors import OperationFailure
from pymongo.read_concern import ReadConcern

from lib.checks import eq


URI = sys.argv[1]
client = MongoClient(URI)
client.drop_database("e2e_py_txn_ddl")
db = client["e2e_py_txn_ddl"]


def names():
    return sorted(db.list_collection_names())


def fails(code, fn, msg):
    try:
        fn()
    except OperationFailure as e:
        eq(e.code, code, msg)
        return
    raise AssertionError("%s: no error, want code %d" % (msg, code))


# DDL in aborted transactions leaves nothing behind.
with client.start_session() as s:
    s.start_transaction()
    db.create_collection("explicit", session=s)
    db["explicit"].insert_one({"_id": 1}, session=s)
    db["indexed"].create_index("a", session=s)
    db["implicit"].insert_one({"_id": 1}, session=s)
    db["upserted"].update_one({"_id": 1}, {"$set": {"x": 1}}, upsert=True, session=s)
    eq(db["explicit"].find_one({}, session=s), {"_id": 1}, "own collection inside")
    eq(db["indexed"].find_one({}, hint="a_1", session=s), None, "own index inside")
    eq(names(), [], "nothing outside before the abort")
    s.abort_transaction()
eq(names(), [], "nothing after the abort")

# The same, committed.
with client.start_session() as s:
    def work(session):
        db.create_collection("explicit", session=session)
        db["indexed"].create_index("a", session=session)
        db["implicit"].insert_one({"_id": 1}, session=session)
    s.with_transaction(work)
eq(names(), ["explicit", "implicit", "indexed"], "collections after the commit")
eq(sorted(db["indexed"].index_information()), ["_id_", "a_1"], "indexes after the commit")

# Explicit creation needs read concern "local".
with client.start_session() as s:
    s.start_transaction(read_concern=ReadConcern("snapshot"))
    fails(72, lambda: db.create_collection("snap", session=s), "create under snapshot")
    fails(251, s.commit_transaction, "commit after the failure")

# New indexes on an existing collection, and other DDL, are refused. A
# command transactions do not run at all (drop, dropIndexes, ...) is refused
# before the transaction is touched, which stays open and commits
# (jstests/core/txns/commands_not_allowed_in_txn.js); createIndexes fails
# inside the command, which aborts the transaction.
refused = [
    ("createIndexes on an existing collection", lambda s: db["indexed"].create_index("b", session=s), True),
    ("drop", lambda s: db.drop_collection("implicit", session=s), False),
    ("dropIndexes", lambda s: db["indexed"].drop_index("a_1", session=s), False),
    ("renameCollection", lambda s: db["implicit"].rename("renamed", session=s), False),
    ("collMod", lambda s: db.command("collMod", "implicit", session=s), False),
    ("dropDatabase", lambda s: client.drop_database("e2e_py_txn_ddl", session=s), False),
]
for name, op, aborts in refused:
    with client.start_session() as s:
        s.start_transaction()
        db["implicit"].insert_one({"by": name}, session=s)
        fails(263, lambda: op(s), name)
        if aborts:
            fails(251, s.commit_transaction, name + ": commit")
        else:
            s.commit_transaction()
eq(names(), ["explicit", "implicit", "indexed"], "collections after the refusals")
eq(db["implicit"].count_documents({}), 1 + sum(1 for _, _, aborts in refused if not aborts),
   "the writes of the transactions the refusals left open")
