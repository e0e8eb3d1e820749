"""Seed pattern through pymongo: add-to-cart with a $ne-guarded upsert and a
positional $inc (and what MongoDB does on the second click), plus the
seed's increase_qty. See examples/cart.
"""

import sys

from bson import ObjectId
from pymongo import ASCENDING, MongoClient
from pymongo.errors import DuplicateKeyError

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_cart")
d = client["e2e_py_seed_cart"]

item = {"_id": ObjectId(), "slug": "wheel-barrow-9092", "sku": "9092", "name": "Extra Large Wheel Barrow",
        "pricing": {"retail": 589700, "sale": 489700}}


def add_to_cart(orders, user):
    try:
        res = orders.update_one({"user_id": user, "state": "CART", "line_items._id": {"$ne": item["_id"]}},
                                {"$push": {"line_items": item}}, upsert=True)
        outcome = 1 if res.upserted_id is not None else 0
    except DuplicateKeyError:
        outcome = "duplicate"
    orders.update_one({"user_id": user, "state": "CART", "line_items._id": item["_id"]},
                      {"$inc": {"line_items.$.qty": 1, "sub_total": item["pricing"]["sale"]}})
    return outcome


def summary(orders, user):
    return [(len(o["line_items"]), o["line_items"][0]["qty"], o["sub_total"]) for o in orders.find({"user_id": user, "state": "CART"})]


# the seed's sequence, as MongoDB runs it: the second click's guarded upsert matches no cart and inserts another
user = ObjectId()
eq(add_to_cart(d.orders_naive, user), 1, "first click upserts the cart")
eq(summary(d.orders_naive, user), [(1, 1, 489700)], "one cart, qty 1")
eq(add_to_cart(d.orders_naive, user), 1, "second click: the $ne-guarded upsert inserts a second cart")
eq(d.orders_naive.count_documents({"user_id": user, "state": "CART"}), 2, "two carts")

# fix: one CART per user by a partial unique index
d.orders.create_index([("user_id", ASCENDING), ("state", ASCENDING)], unique=True, partialFilterExpression={"state": "CART"})
u2 = ObjectId()
eq((add_to_cart(d.orders, u2), add_to_cart(d.orders, u2)), (1, "duplicate"), "second click hits the unique index")
eq(summary(d.orders, u2), [(1, 2, 979400)], "one cart, qty 2, subtotal 979400")
ixscan(d.orders, {"user_id": u2, "state": "CART", "line_items._id": item["_id"]}, None, "user_id_1_state_1")

# increase_qty: positional $inc, else a $ne-guarded $push
d.orders_items.insert_one({"_id": 1, "total": 0, "items": []})


def increase_qty(sku, price, qty):
    while True:
        if d.orders_items.update_one({"_id": 1, "items.sku": sku}, {"$inc": {"total": price * qty, "items.$.qty": qty}}).matched_count:
            return
        if d.orders_items.update_one({"_id": 1, "items.sku": {"$ne": sku}},
                                     {"$inc": {"total": price * qty}, "$push": {"items": {"sku": sku, "qty": qty, "price": price}}}).matched_count:
            return


increase_qty("9092", 100, 2)
increase_qty("1234", 50, 1)
increase_qty("9092", 100, 3)
o = d.orders_items.find_one({"_id": 1})
eq((o["total"], [(i["sku"], i["qty"]) for i in o["items"]]), (550, [("9092", 5), ("1234", 1)]), "increase_qty")
