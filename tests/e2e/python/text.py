"""Text search through pymongo: create_index with TEXT and weights,
$text with a language, scores projected and sorted with
{"$meta": "textScore"}, and count_documents with $text."""

import sys

from pymongo import TEXT, MongoClient
from pymongo.errors import OperationFailure

from lib.checks import eq


client = MongoClient(sys.argv[1])
client.drop_database("e2e_py_text")
c = client["e2e_py_text"]["recipes"]
c.insert_many([
    {"_id": 1, "name": "Tortilla española", "notes": "huevos y patatas", "language": "spanish"},
    {"_id": 2, "name": "Potato salad", "notes": "potatoes and eggs"},
    {"_id": 3, "name": "Boiled eggs", "notes": "eggs, water"},
])
eq(c.create_index([("name", TEXT), ("notes", TEXT)], weights={"name": 3}, name="search"), "search", "create_index")

score = {"$meta": "textScore"}
got = list(c.find({"$text": {"$search": "egg"}}, {"score": score}).sort([("score", score)]))
eq([d["_id"] for d in got], [3, 2], "stemmed English terms, sorted by score")
eq(got[0]["score"], 3.0, "name weight and term frequency")
eq([d["_id"] for d in c.find({"$text": {"$search": "patata", "$language": "es"}})], [1], "Spanish stems")
eq(c.count_documents({"$text": {"$search": "espanola", "$language": "es"}}), 1, "diacritics ignored")

try:
    list(c.find({"$nor": [{"$text": {"$search": "egg"}}]}))
    raise SystemExit("$text under $nor was accepted")
except OperationFailure as e:
    eq(e.code, 2, "$text under $nor")
print("ok")
