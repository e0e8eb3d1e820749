// Text search through the shell: createIndex with "text" fields and
// weights, $text with phrases and negation, scores projected and sorted
// with {$meta: "textScore"} in find and aggregate, explain's TEXT_MATCH,
// and MongoDB's refusals.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_mongosh_text');
d.dropDatabase();
d.articles.insertMany([
  {_id: 1, title: 'Coffee', body: 'How to brew a cup'},
  {_id: 2, title: 'Tea', body: 'coffee lovers drink tea too'},
  {_id: 3, title: 'Cakes', body: 'Baking a coffee cake'},
  {_id: 4, title: 'Bread', body: 'flour water salt'},
]);
eq(d.articles.createIndex({title: 'text', body: 'text'}, {weights: {title: 5}}), 'title_text_body_text', 'createIndex');
const ix = d.articles.getIndexes()[1];
eq([ix.key, ix.weights, ix.default_language, ix.textIndexVersion], [{_fts: 'text', _ftsx: 1}, {body: 1, title: 5}, 'english', 3], 'getIndexes');

const found = d.articles.find({$text: {$search: 'coffee'}}, {score: {$meta: 'textScore'}, title: 1}).sort({score: {$meta: 'textScore'}}).toArray();
eq(found.map(x => x._id), [1, 3, 2], 'find sorted by score');
eq(found[0].score, 5, 'title weight');
eq(d.articles.find({$text: {$search: 'coffee -tea'}}).toArray().map(x => x._id).sort(), [1, 3], 'negation');
eq(d.articles.find({$text: {$search: '"coffee cake"'}}).toArray().map(x => x._id), [3], 'phrase');
eq(d.articles.countDocuments({$text: {$search: 'baked brewing'}}), 2, 'stemmed terms');

const agg = d.articles.aggregate([
  {$match: {$text: {$search: 'coffee'}}},
  {$project: {title: 1, score: {$meta: 'textScore'}}},
  {$sort: {score: -1}},
  {$limit: 1},
]).toArray();
eq(agg, [{_id: 1, title: 'Coffee', score: 5}], 'aggregate with the score');

const plan = d.articles.find({$text: {$search: 'coffee cake'}}).explain().queryPlanner.winningPlan;
eq([plan.stage, plan.parsedTextQuery.terms], ['TEXT_MATCH', ['cake', 'coffe']], 'explain');

// Every text index on the text fields alone has the key pattern
// {_fts: 'text', _ftsx: 1}: a second one is an equivalent index with
// another name and options (85). One with another key pattern meets the
// one-text-index rule (67).
let code = 0;
let msg = '';
try {
  d.articles.createIndex({other: 'text'});
} catch (e) {
  [code, msg] = [e.code, e.message];
}
eq([code, msg.startsWith('An equivalent index already exists with a different name and options.')], [85, true], 'a second text index');
code = 0;
try {
  d.articles.createIndex({lang: 1, other: 'text'});
} catch (e) {
  code = e.code;
}
eq(code, 67, 'a second text index of another key pattern');
code = 0;
d.plain.insertOne({a: 'x'});
try {
  d.plain.find({$text: {$search: 'x'}}).toArray();
} catch (e) {
  code = e.code;
}
eq(code, 27, '$text without a text index');
print('ok');
