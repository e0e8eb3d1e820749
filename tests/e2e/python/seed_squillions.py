"""Seed pattern through pymongo: one->squillions with a capped embedded list
($push with $each/$sort/$slice). See examples/squillions.
"""

import datetime
import sys

from pymongo import ASCENDING, DESCENDING, MongoClient

from lib.checks import eq, ixscan


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_seed_squillions")
d = client["e2e_py_seed_squillions"]

KEEP = 5
d.hosts.create_index([("ipaddr", ASCENDING)], unique=True)
d.logmsg.create_index([("host", ASCENDING), ("time", DESCENDING)])
d.hosts.insert_one({"ipaddr": "127.66.66.66", "hostname": "goofy.example.com", "logmsgs": []})


def log_message(ip, now, msg):
    host = d.hosts.find_one({"ipaddr": ip}, {"_id": 1})  # do not ship the whole host
    eq(list(host), ["_id"], "projection {_id: 1}")
    d.logmsg.insert_one({"time": now, "message": msg, "ipaddr": ip, "host": host["_id"]})
    d.hosts.update_one({"_id": host["_id"]}, {"$push": {"logmsgs": {
        "$each": [{"time": now, "message": msg}], "$sort": {"time": 1}, "$slice": -KEEP}}})


for i in [0, 1, 2, 3, 11, 4, 5, 6, 10, 7, 8, 9]:
    log_message("127.66.66.66", datetime.datetime(2014, 3, 28, 9, 42, i), "message %d" % i)
ixscan(d.hosts, {"ipaddr": "127.66.66.66"}, None, "ipaddr_1")
host = d.hosts.find_one({"ipaddr": "127.66.66.66"})
eq([m["message"] for m in host["logmsgs"]], ["message %d" % i for i in range(7, 12)], "capped embedded list")
eq(d.logmsg.count_documents({"host": host["_id"]}), 12, "every message on the many side")
ixscan(d.logmsg, {"host": host["_id"]}, {"time": -1}, "host_1_time_-1")
