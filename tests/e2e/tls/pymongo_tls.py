"""pymongo against a folio started with -tls-mode requireTLS, a CA file and
connections without certificates allowed: TLS clients work, with or without
a client certificate; a plain client cannot connect.
Arguments: URI, CA file, client certificate key file."""

import sys

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from checks import eq


URI, CA, CLIENT = sys.argv[1:4]

for name, extra in [("no client certificate", {}), ("client certificate", {"tlsCertificateKeyFile": CLIENT})]:
    client = MongoClient(URI, tls=True, tlsCAFile=CA, serverSelectionTimeoutMS=5000, **extra)
    eq(client.admin.command("ping")["ok"], 1.0, name + ": ping")
    coll = client["e2e_py_tls"]["c"]
    coll.insert_one({"over": name})
    eq(coll.count_documents({"over": name}), 1, name + ": document written over TLS")
    client.close()

plain = MongoClient(URI, serverSelectionTimeoutMS=1500, connectTimeoutMS=1500)
try:
    plain.admin.command("ping")
    raise AssertionError("a plain client connected to a requireTLS server")
except PyMongoError:
    pass
plain.close()
