// CRUD round trip through mongosh's collection helpers: insert, find with
// filter/projection/sort/skip/limit, updates, replace, delete, the count
// helpers, distinct, findOneAnd*, collection names with dashes,
// listCollections, renameCollection, drop and dropDatabase.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_mongosh_crud');
d.dropDatabase();
const c = d.people;

// insert
eq(c.insertMany([
  {_id: 1, name: 'ann', age: 31, city: 'oslo'},
  {_id: 2, name: 'bob', age: 25, city: 'rome'},
  {_id: 3, name: 'cy', age: 40, city: 'oslo'},
  {_id: 4, name: 'dee', age: 25, city: 'lima'},
]).insertedIds, {0: 1, 1: 2, 2: 3, 3: 4}, 'insertMany insertedIds');
eq(c.insertOne({_id: 5, name: 'eve', age: 19, city: 'rome'}).insertedId, 5, 'insertOne insertedId');

// find
eq(c.find({city: 'oslo'}, {_id: 0, name: 1}).sort({age: -1}).toArray(),
  [{name: 'cy'}, {name: 'ann'}], 'find filter+projection+sort');
eq(c.find({}, {name: 1}).sort({age: 1, _id: 1}).skip(1).limit(2).toArray(),
  [{_id: 2, name: 'bob'}, {_id: 4, name: 'dee'}], 'find sort+skip+limit');
eq(c.find({age: {$gte: 25, $lt: 40}}).sort({_id: 1}).toArray().map(x => x._id),
  [1, 2, 4], 'find range filter');
eq(c.find({city: {$in: ['lima', 'rome']}}, {age: 0, city: 0}).sort({name: -1}).toArray(),
  [{_id: 5, name: 'eve'}, {_id: 4, name: 'dee'}, {_id: 2, name: 'bob'}], 'find $in + exclusion projection');
eq(c.findOne({_id: 3}, {city: 1, _id: 0}), {city: 'oslo'}, 'findOne projection');
eq(c.findOne({_id: 42}), null, 'findOne no match');

// update and replace
let r = c.updateOne({_id: 2}, {$set: {city: 'oslo'}, $inc: {age: 1}});
eq([r.matchedCount, r.modifiedCount], [1, 1], 'updateOne counts');
eq(c.findOne({_id: 2}), {_id: 2, name: 'bob', age: 26, city: 'oslo'}, 'after updateOne');
r = c.updateMany({city: 'oslo'}, {$inc: {visits: 1}});
eq([r.matchedCount, r.modifiedCount], [3, 3], 'updateMany counts');
eq(c.find({visits: 1}).sort({_id: 1}).toArray().map(x => x._id), [1, 2, 3], 'after updateMany');
r = c.updateOne({_id: 99}, {$set: {name: 'zed'}}, {upsert: true});
// mongosh reports the upserted _id as insertedId.
eq([r.matchedCount, r.upsertedCount, r.insertedId], [0, 1, 99], 'upsert');
eq(c.findOne({_id: 99}), {_id: 99, name: 'zed'}, 'upserted document');
r = c.replaceOne({_id: 4}, {name: 'dee', age: 26});
eq([r.matchedCount, r.modifiedCount], [1, 1], 'replaceOne counts');
eq(c.findOne({_id: 4}), {_id: 4, name: 'dee', age: 26}, 'after replaceOne');

// counting and distinct
eq(c.countDocuments({city: 'oslo'}), 3, 'countDocuments filter');
eq(c.countDocuments(), 6, 'countDocuments all');
eq(c.estimatedDocumentCount(), 6, 'estimatedDocumentCount');
eq(c.find({age: {$lt: 30}}).count(), 3, 'cursor count');
eq(c.distinct('city').sort(), ['oslo', 'rome'], 'distinct');
eq(c.distinct('name', {age: {$lt: 30}}).sort(), ['bob', 'dee', 'eve'], 'distinct with filter');

// findOneAnd*
eq(c.findOneAndUpdate({_id: 5}, {$set: {city: 'lima'}}, {returnDocument: 'after', projection: {_id: 0, city: 1}}),
  {city: 'lima'}, 'findOneAndUpdate after');
eq(c.findOneAndUpdate({name: 'ann'}, {$inc: {age: 1}}),
  {_id: 1, name: 'ann', age: 31, city: 'oslo', visits: 1}, 'findOneAndUpdate before');
eq(c.findOne({_id: 1}).age, 32, 'findOneAndUpdate applied');
eq(c.findOneAndDelete({_id: 99}), {_id: 99, name: 'zed'}, 'findOneAndDelete');
eq(c.findOneAndDelete({_id: 99}), null, 'findOneAndDelete no match');

// delete
eq(c.deleteOne({_id: 1}).deletedCount, 1, 'deleteOne');
eq(c.deleteMany({age: {$lt: 30}}).deletedCount, 3, 'deleteMany');
eq(c.find().toArray(), [{_id: 3, name: 'cy', age: 40, city: 'oslo', visits: 1}], 'left after deletes');

// collections, including names that are not JS identifiers
d.createCollection('things');
d.getCollection('stats-2011').insertOne({_id: 'x', n: 1});
d.getCollection('sites-nov').insertMany([{_id: 1}, {_id: 2}]);
eq(d.getCollection('sites-nov').countDocuments(), 2, 'sites-nov count');
eq(d.getCollectionNames(), ['people', 'sites-nov', 'stats-2011', 'things'], 'getCollectionNames');
const info = d.getCollectionInfos({name: 'things'});
eq([info.length, info[0].name, info[0].type], [1, 'things', 'collection'], 'getCollectionInfos');
d.getCollection('stats-2011').renameCollection('stats-2012');
eq(d.getCollectionNames(), ['people', 'sites-nov', 'stats-2012', 'things'], 'after renameCollection');
eq(d.getCollection('stats-2012').findOne(), {_id: 'x', n: 1}, 'renamed collection keeps its documents');
eq(d.things.drop(), true, 'drop');
eq(d.getCollectionNames(), ['people', 'sites-nov', 'stats-2012'], 'after drop');

// dropDatabase
eq(d.dropDatabase().ok, 1, 'dropDatabase');
eq(d.getCollectionNames(), [], 'no collections after dropDatabase');
eq(db.adminCommand({listDatabases: 1, nameOnly: true}).databases.some(x => x.name === d.getName()), false,
  'dropped database is not listed');
