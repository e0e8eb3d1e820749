"""Seed pattern through pymongo: polymorphic nodes, lazy and batched
migrations, [name, value] property arrays. See examples/polymorphic.
"""

import sys

from pymongo import ASCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_polymorphic")
d = client["e2e_py_seed_polymorphic"]

d.nodes.create_index([("url", ASCENDING)], unique=True)
d.nodes.insert_many([{"type": "photo", "url": "/photo/%d" % i, "content": b"\xff\xd8"} if i % 2
                     else {"type": "page", "url": "/page/%d" % i, "text": "..."} for i in range(250)])


def get_node_by_url(url):  # lazy migration: the application supplies the default
    node = d.nodes.find_one({"url": url})
    node.setdefault("short_description", "")
    return node


eq(get_node_by_url("/photo/1")["short_description"], "", "lazy default")
ixscan(d.nodes, {"url": "/photo/1"}, None, "url_1")

rounds = 0
while True:
    ids = [n["_id"] for n in d.nodes.find({"short_description": {"$exists": False}}, {"_id": 1}).limit(100)]
    if not ids:
        break
    d.nodes.update_many({"_id": {"$in": ids}}, {"$set": {"short_description": ""}})
    rounds += 1
eq(rounds, 3, "three batches of 100")
eq(d.nodes.count_documents({"short_description": {"$exists": False}}), 0, "all migrated")
eq(d.nodes.update_many({}, {"$set": {"version": 2}}).modified_count, 250, "migrate all at once")

d.products.insert_many([
    {"title": "Big and Fast Disk Drive", "properties": [["Seek Time", "5ms"], ["Rotational Speed", "15k RPM"]]},
    {"title": "Slow Disk Drive", "properties": [["Seek Time", "12ms"], ["Rotational Speed", "5400 RPM"]]}])
d.products.create_index([("properties", ASCENDING)])
eq([p["title"] for p in d.products.find({"properties": ["Seek Time", "5ms"]})], ["Big and Fast Disk Drive"], "pair query")
ixscan(d.products, {"properties": ["Seek Time", "5ms"]}, None, "properties_1")
