"""Seed pattern through pymongo: compensation-driven order states and
two-phase-commit transfers with idempotent retire, rollback and cleanup.
See examples/transactions.
"""

import datetime
import sys

from bson import ObjectId
from pymongo import ASCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_transactions")
d = client["e2e_py_seed_transactions"]

# compensation: order states and item-by-item reservation
d.inventory.create_index([("sku", ASCENDING), ("state", ASCENDING)])
d.inventory.insert_many([{"sku": "wheelbarrow", "state": "AVAILABLE"} for _ in range(3)])
d.orders.insert_many([{"_id": 1, "state": "CART"}, {"_id": 2, "state": "CART"}])


def checkout(order_id, qty):
    if d.orders.update_one({"_id": order_id, "state": "CART"}, {"$set": {"state": "PRE-AUTHORIZE"}}).modified_count != 1:
        return False
    for _ in range(qty):
        item = d.inventory.find_one_and_update({"sku": "wheelbarrow", "state": "AVAILABLE"},
                                               {"$set": {"state": "IN_CART", "order_id": order_id}})
        if item is None:  # compensate
            d.inventory.update_many({"order_id": order_id, "state": "IN_CART"},
                                    {"$set": {"state": "AVAILABLE"}, "$unset": {"order_id": ""}})
            d.orders.update_one({"_id": order_id, "state": "PRE-AUTHORIZE"}, {"$set": {"state": "CART"}})
            return False
    d.orders.update_one({"_id": order_id, "state": "PRE-AUTHORIZE"}, {"$set": {"state": "AUTHORIZED"}})
    return True


eq((checkout(1, 2), checkout(2, 2)), (True, False), "order 1 authorized, order 2 compensated")
eq([o["state"] for o in d.orders.find().sort("_id")], ["AUTHORIZED", "CART"], "order states")
eq(d.inventory.count_documents({"sku": "wheelbarrow", "state": "AVAILABLE"}), 1, "released item is available")
ixscan(d.inventory, {"sku": "wheelbarrow", "state": "AVAILABLE"}, None, "sku_1_state_1")

# two-phase commit transfers
MAX = datetime.timedelta(minutes=1)
d.transactions.create_index([("state", ASCENDING), ("ts", ASCENDING)])
d.accounts.insert_many([{"_id": 1, "balance": 100, "txns": []}, {"_id": 2, "balance": 0, "txns": []}])


def prepare(amt, src, dst, ts):
    txn = {"_id": ObjectId(), "state": "new", "ts": ts, "amt": amt, "src": src, "dst": dst}
    d.transactions.insert_one(txn)
    r = d.accounts.update_one({"_id": src, "balance": {"$gte": amt}}, {"$inc": {"balance": -amt}, "$push": {"txns": txn["_id"]}})
    if r.matched_count == 0:
        d.transactions.delete_one({"_id": txn["_id"]})
        return None
    d.accounts.update_one({"_id": dst}, {"$inc": {"balance": amt}, "$push": {"txns": txn["_id"]}})
    return txn


def retire(txn):
    for _id in (txn["src"], txn["dst"]):
        d.accounts.update_one({"_id": _id, "txns": txn["_id"]}, {"$pull": {"txns": txn["_id"]}})
    d.transactions.delete_one({"_id": txn["_id"]})


def commit(txn, now):
    r = d.transactions.update_one({"_id": txn["_id"], "state": "new", "ts": {"$gt": now - MAX}}, {"$set": {"state": "commit"}})
    if r.modified_count != 1:
        return False
    retire(txn)
    return True


def rollback(txn):
    d.accounts.update_one({"_id": txn["src"], "txns": txn["_id"]}, {"$inc": {"balance": txn["amt"]}, "$pull": {"txns": txn["_id"]}})
    d.accounts.update_one({"_id": txn["dst"], "txns": txn["_id"]}, {"$inc": {"balance": -txn["amt"]}, "$pull": {"txns": txn["_id"]}})
    d.transactions.delete_one({"_id": txn["_id"]})


def cleanup(now):
    for txn in list(d.transactions.find({"state": "commit"})):
        retire(txn)
    d.transactions.update_many({"state": "new", "ts": {"$lt": now - MAX}}, {"$set": {"state": "rollback"}})
    for txn in list(d.transactions.find({"state": "rollback"})):
        rollback(txn)


def balances():
    return [(a["balance"], len(a["txns"])) for a in d.accounts.find().sort("_id")]


now = datetime.datetime.utcnow().replace(microsecond=0)
t = prepare(55, 1, 2, now)
eq(balances(), [(45, 1), (55, 1)], "prepared")
eq(commit(t, now), True, "commit")
retire(t)
eq(balances(), [(45, 0), (55, 0)], "retired, idempotently")
eq(prepare(500, 1, 2, now), None, "insufficient funds")
eq(d.transactions.count_documents({}), 0, "no trace of the failed transfer")
t = prepare(5, 2, 1, now)
d.transactions.update_one({"_id": t["_id"]}, {"$set": {"state": "commit"}})  # crash after commit
cleanup(now)
eq(balances(), [(50, 0), (50, 0)], "cleanup retires committed transfers")
t = prepare(30, 1, 2, now - 2 * MAX)  # crash before commit
eq(commit(t, now), False, "expired transfer does not commit")
ixscan(d.transactions, {"state": "new", "ts": {"$lt": now - MAX}}, None, "state_1_ts_1")
cleanup(now)
rollback(t)
eq(balances(), [(50, 0), (50, 0)], "rolled back, idempotently")
eq(d.transactions.count_documents({}), 0, "no transaction left")
