// Views through mongosh: db.createView, reads through find, count,
// distinct and aggregate, a view on a view, listCollections' type "view",
// and the refusal of writes (166).

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_mongosh_views');
d.dropDatabase();
d.scores.insertMany([
  {_id: 1, name: 'ann', score: 90, cls: 'a'},
  {_id: 2, name: 'bob', score: 60, cls: 'b'},
  {_id: 3, name: 'cy', score: 75, cls: 'a'},
  {_id: 4, name: 'dee', score: 40, cls: 'b'},
]);
d.createView('passed', 'scores', [{$match: {score: {$gte: 50}}}, {$project: {name: 1, score: 1, cls: 1}}]);
d.createView('passedA', 'passed', [{$match: {cls: 'a'}}]);

eq(d.passed.find({}, {name: 1, _id: 0}).sort({score: -1}).toArray(), [{name: 'ann'}, {name: 'cy'}, {name: 'bob'}], 'find on the view');
eq(d.passed.countDocuments({cls: 'b'}), 1, 'countDocuments');
eq(d.passed.distinct('cls').sort(), ['a', 'b'], 'distinct');
eq(d.passedA.aggregate([{$group: {_id: null, avg: {$avg: '$score'}}}]).toArray(), [{_id: null, avg: 82.5}], 'aggregate on a view on a view');
eq(d.getCollectionInfos({type: 'view'}).map((c) => [c.name, c.options.viewOn]), [['passed', 'scores'], ['passedA', 'passed']], 'listCollections');

let code = 0;
try {
  d.passed.insertOne({name: 'x'});
} catch (e) {
  code = e.code;
}
eq(code, 166, 'insert into a view');
d.passed.drop();
eq(d.getCollectionNames().includes('passed'), false, 'dropped view');
