"""Seed 002's transfer as real transactions through pymongo: 8 threads,
each with its own client and session, move money between random accounts
with with_transaction (which retries TransientTransactionError), and the
total balance stays constant. Then an aborted transaction leaves no trace,
uncommitted writes are invisible to other sessions, and a second writer of
one document gets WriteConflict (112) labelled TransientTransactionError."""

import random
import sys
import threading

from pymongo import MongoClient
from pymongo.errors import OperationFailure

from lib.checks import eq


URI = sys.argv[1]
ACCOUNTS, START, WORKERS, TRANSFERS = 10, 1000, 8, 20

client = MongoClient(URI)
client.drop_database("e2e_py_txn")
accounts = client["e2e_py_txn"]["accounts"]
accounts.insert_many([{"_id": i, "balance": START} for i in range(ACCOUNTS)])

errors = []


def worker(seed):
    rng = random.Random(seed)
    c = MongoClient(URI)
    coll = c["e2e_py_txn"]["accounts"]
    try:
        with c.start_session() as s:
            for _ in range(TRANSFERS):
                src, dst = rng.sample(range(ACCOUNTS), 2)
                amount = rng.randint(1, 50)

                def transfer(session):
                    coll.update_one({"_id": src}, {"$inc": {"balance": -amount}}, session=session)
                    coll.update_one({"_id": dst}, {"$inc": {"balance": amount}}, session=session)

                s.with_transaction(transfer)
    except Exception as e:  # reported by the main thread
        errors.append(e)
    finally:
        c.close()


threads = [threading.Thread(target=worker, args=(i,)) for i in range(WORKERS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
eq(errors, [], "transfer errors")
total = list(accounts.aggregate([{"$group": {"_id": None, "t": {"$sum": "$balance"}}}]))[0]["t"]
eq(total, ACCOUNTS * START, "total balance")

# An aborted transaction leaves no trace; uncommitted writes are invisible.
with client.start_session() as s:
    s.start_transaction()
    accounts.insert_one({"_id": "ghost"}, session=s)
    eq(accounts.count_documents({"_id": "ghost"}, session=s), 1, "own write visible inside")
    eq(accounts.count_documents({"_id": "ghost"}), 0, "uncommitted write invisible outside")
    s.abort_transaction()
eq(accounts.count_documents({"_id": "ghost"}), 0, "aborted write gone")

# The second writer of a document gets WriteConflict.
s1, s2 = client.start_session(), client.start_session()
s1.start_transaction()
s2.start_transaction()
accounts.update_one({"_id": 0}, {"$set": {"x": 0}}, session=s1)
try:
    accounts.update_one({"_id": 0}, {"$set": {"x": 1}}, session=s2)
    raise AssertionError("second writer did not conflict")
except OperationFailure as e:
    eq(e.code, 112, "conflict code")
    eq(e.has_error_label("TransientTransactionError"), True, "TransientTransactionError label")
s1.commit_transaction()
s1.end_session()
s2.end_session()
client.drop_database("e2e_py_txn")
print("ok")
