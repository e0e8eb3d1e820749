"""Administrative commands through pymongo: hello, ping, buildInfo,
serverStatus (connections, opcounters), listDatabases, dbStats,
collStats, and the cluster parameter changeStreamOptions."""

import sys

from pymongo import MongoClient

from lib.checks import eq


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


client = MongoClient(sys.argv[1])
admin = client.admin

hello = admin.command("hello")
eq((hello["ok"], hello["isWritablePrimary"]), (1.0, True), "hello")
check(hello["maxWireVersion"] >= 6, "hello maxWireVersion %r" % hello["maxWireVersion"])
eq(admin.command("ping")["ok"], 1.0, "ping")
bi = admin.command("buildInfo")
check(isinstance(bi["version"], str) and bi["version"], "buildInfo version %r" % bi.get("version"))
check(isinstance(bi["versionArray"], list), "buildInfo versionArray")

client.drop_database("e2e_py_admin")
d = client["e2e_py_admin"]
before = admin.command("serverStatus")
check(before["connections"]["current"] >= 1, "serverStatus connections.current %r" % before["connections"])
d["a"].insert_many([{"_id": 1, "s": "x"}, {"_id": 2, "s": "yy"}, {"_id": 3, "s": "zzz"}])
d["b"].insert_one({"_id": 1})
after = admin.command("serverStatus")
check(after["opcounters"]["insert"] - before["opcounters"]["insert"] >= 4,
      "opcounters.insert went from %r to %r after 4 inserts" % (before["opcounters"]["insert"], after["opcounters"]["insert"]))

names = [x["name"] for x in admin.command("listDatabases")["databases"]]
check("e2e_py_admin" in names, "listDatabases lacks e2e_py_admin: %r" % names)
check("e2e_py_admin" in client.list_database_names(), "list_database_names lacks e2e_py_admin")

ds = d.command("dbStats")
eq((ds["db"], ds["collections"], ds["objects"]), ("e2e_py_admin", 2, 4), "dbStats")
cs = d.command("collStats", "a")
eq((cs["ns"], cs["count"]), ("e2e_py_admin.a", 3), "collStats")
check(cs["size"] > 0, "collStats size %r" % cs["size"])

params = admin.command("getClusterParameter", "changeStreamOptions")["clusterParameters"]
eq([p["_id"] for p in params], ["changeStreamOptions"], "getClusterParameter")
admin.command("setClusterParameter", {"changeStreamOptions": {"preAndPostImages": {"expireAfterSeconds": 3600}}})
got = admin.command("getClusterParameter", "*")["clusterParameters"][0]["preAndPostImages"]["expireAfterSeconds"]
eq(got, 3600, "changeStreamOptions read back")
admin.command("setClusterParameter", {"changeStreamOptions": {"preAndPostImages": {"expireAfterSeconds": "off"}}})

client.drop_database("e2e_py_admin")
