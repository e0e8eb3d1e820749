"""Seed pattern through pymongo: comments one per document (slug/full_slug),
all embedded (nested replies, $slice pages) and in hybrid buckets
(find_one_and_update upsert with projection and ReturnDocument.AFTER, the
seed's find_and_modify fields/new). See examples/comments.
"""

import datetime
import re
import sys

from pymongo import ASCENDING, MongoClient, ReturnDocument

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_comments")
d = client["e2e_py_seed_comments"]

def posted(i):
    return datetime.datetime(2012, 2, 8, 12, 21, 8) + datetime.timedelta(hours=i)


def slug_part(i):
    return "%04x" % (0x34db + i * 0x1f1)


# one document per comment
c = d.comments
c.create_index([("discussion_id", ASCENDING), ("posted", ASCENDING)])
c.create_index([("discussion_id", ASCENDING), ("full_slug", ASCENDING)])
c.create_index([("discussion_id", ASCENDING), ("slug", ASCENDING)])


def add_comment(i, parent_slug, text):
    slug, full = slug_part(i), posted(i).strftime("%Y.%m.%d.%H.%M.%S") + ":" + slug_part(i)
    if parent_slug:
        parent = c.find_one({"discussion_id": 1, "slug": parent_slug})
        slug, full = parent["slug"] + "/" + slug, parent["full_slug"] + "/" + full
    c.insert_one({"discussion_id": 1, "slug": slug, "full_slug": full, "posted": posted(i), "text": text})
    return slug


a = add_comment(0, None, "A")
b = add_comment(1, None, "B")
a1 = add_comment(2, a, "A.1")
add_comment(3, b, "B.1")
add_comment(4, a1, "A.1.a")
add_comment(5, a, "A.2")
texts = lambda cur: [x["text"] for x in cur]  # noqa: E731
eq(texts(c.find({"discussion_id": 1}).sort("posted").skip(2).limit(2)), ["A.1", "B.1"], "time-ordered page")
ixscan(c, {"discussion_id": 1}, {"posted": 1}, "discussion_id_1_posted_1")
eq(texts(c.find({"discussion_id": 1}).sort("full_slug")), ["A", "A.1", "A.1.a", "A.2", "B", "B.1"], "thread order")
ixscan(c, {"discussion_id": 1}, {"full_slug": 1}, "discussion_id_1_full_slug_1")
one = c.find_one({"discussion_id": 1, "slug": a1})
eq(one["text"], "A.1", "by slug")
ixscan(c, {"discussion_id": 1, "slug": a1}, None, "discussion_id_1_slug_1")
sub = {"discussion_id": 1, "full_slug": re.compile("^" + re.escape(one["full_slug"]))}
eq(texts(c.find(sub).sort("full_slug")), ["A.1", "A.1.a"], "subthread by escaped prefix")
ixscan(c, sub, {"full_slug": 1}, "discussion_id_1_full_slug_1")

# all comments embedded
d.discussion.insert_many([{"discussion_id": 1, "comments": []}, {"discussion_id": 2, "replies": []}])
for i in range(7):
    d.discussion.update_one({"discussion_id": 1}, {"$push": {"comments": {"posted": posted(i), "text": "c%d" % i}}})


def page(skip, limit):
    return texts(d.discussion.find_one({"discussion_id": 1}, {"comments": {"$slice": [skip, limit]}})["comments"])


eq((page(3, 3), page(6, 3), page(4, 1)), (["c3", "c4", "c5"], ["c6"], ["c4"]), "$slice pages")


def reply(path, text):
    if path:
        path = ".".join("replies.%d" % part for part in path) + ".replies"
    else:
        path = "replies"
    d.discussion.update_one({"discussion_id": 2}, {"$push": {path: {"text": text, "replies": []}}})


def iter_comments(obj):
    for r in obj["replies"]:
        yield r["text"]
        for s in iter_comments(r):
            yield s


for path, text in [([], "A"), ([], "B"), ([0], "A.1"), ([0], "A.2"), ([0, 1], "A.2.a"), ([1], "B.1")]:
    reply(path, text)
eq(list(iter_comments(d.discussion.find_one({"discussion_id": 2}))), ["A", "A.1", "A.2", "A.2.a", "B", "B.1"], "nested replies")

# hybrid buckets
SIZE = 3
d.comment_buckets.create_index([("discussion_id", ASCENDING), ("bucket", ASCENDING)])
d.comment_buckets.create_index([("discussion_id", ASCENDING), ("comments.slug", ASCENDING)])
d.bucket_discussions.insert_one({"_id": 1, "num_buckets": 1})


def add_to_bucket(slug, text):
    disc = d.bucket_discussions.find_one({"_id": 1})
    # the seed's find_and_modify(..., fields=, upsert=True, new=True)
    bucket = d.comment_buckets.find_one_and_update(
        {"discussion_id": 1, "bucket": disc["num_buckets"]},
        {"$inc": {"count": 1}, "$push": {"comments": {"slug": slug, "text": text}}},
        projection={"count": 1}, upsert=True, return_document=ReturnDocument.AFTER)
    eq(sorted(bucket), ["_id", "count"], "projection of the returned bucket")
    if bucket["count"] > SIZE:
        d.bucket_discussions.update_one({"_id": 1, "num_buckets": disc["num_buckets"]}, {"$inc": {"num_buckets": 1}})


for i in range(10):
    add_to_bucket(slug_part(i), "c%d" % i)
eq([x["count"] for x in d.comment_buckets.find({"discussion_id": 1}).sort("bucket")], [4, 4, 2], "bucket counts")
ixscan(d.comment_buckets, {"discussion_id": 1, "bucket": 2}, None, "discussion_id_1_bucket_1")


def find_comments(skip, limit):
    result = []
    for bucket in d.comment_buckets.find({"discussion_id": 1}, {"bucket": 1}).sort("bucket"):
        p = d.comment_buckets.find_one({"discussion_id": 1, "bucket": bucket["bucket"]},
                                       {"count": 1, "comments": {"$slice": [skip, limit]}})
        result.extend(texts(p["comments"]))
        skip = max(0, skip - p["count"])
        limit -= len(p["comments"])
        if limit == 0:
            break
    return result


eq((find_comments(3, 4), find_comments(8, 5)), (["c3", "c4", "c5", "c6"], ["c8", "c9"]), "pages across buckets")
by_slug = {"discussion_id": 1, "comments.slug": slug_part(5)}
eq([x["text"] for x in d.comment_buckets.find_one(by_slug, {"comments": 1})["comments"] if x["slug"] == slug_part(5)],
   ["c5"], "comment by slug")
ixscan(d.comment_buckets, by_slug, None, "discussion_id_1_comments.slug_1")

# Shard keys: comments by discussion and full_slug, buckets by discussion and
# bucket number; through a router, shardCollection runs on admin with the
# full namespace.
for coll, key in (("comments", {"discussion_id": 1, "full_slug": 1}), ("comment_buckets", {"discussion_id": 1, "bucket": 1})):
    ns = d.name + "." + coll
    eq(client.admin.command("shardCollection", ns, key=key)["collectionsharded"], ns, "shardCollection " + coll)
    stats = d.command("collStats", coll)
    eq((stats["sharded"], stats["nchunks"]), (True, 1), "collStats " + coll)
