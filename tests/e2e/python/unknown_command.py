"""An unknown command raises OperationFailure with code 59
(CommandNotFound) and leaves the client usable."""

import sys

from pymongo import MongoClient
from pymongo.errors import OperationFailure

client = MongoClient(sys.argv[1])
try:
    client["e2e_py_unknown"].command("noSuchCommandForFolio")
    raise AssertionError("unknown command succeeded")
except OperationFailure as e:
    if e.code != 59 or e.details.get("codeName") != "CommandNotFound":
        raise AssertionError("unknown command: got code %r (%r), want 59 (CommandNotFound)"
                             % (e.code, e.details.get("codeName")))
if client.admin.command("ping")["ok"] != 1.0:
    raise AssertionError("ping after unknown command failed")
