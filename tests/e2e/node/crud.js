// CRUD through the Node driver: inserts with generated ids, finds with
// filter/projection/sort/skip/limit, updates and upserts, findOneAndUpdate,
// a duplicate key (11000 with keyValue), an aggregation and an index the
// planner uses (explain shows IXSCAN).
'use strict';
const assert = require('node:assert/strict');
const { MongoClient } = require('mongodb');

async function main(uri) {
  const client = new MongoClient(uri);
  await client.connect();
  try {
    const db = client.db('e2e_node_crud');
    await db.dropDatabase();
    const c = db.collection('people');
    const r = await c.insertMany([{ name: 'ann', age: 31 }, { name: 'bob', age: 25 }, { name: 'cy', age: 40 }]);
    assert.equal(r.insertedCount, 3);
    await c.createIndex({ age: 1 });
    const found = await c.find({ age: { $gte: 30 } }, { projection: { _id: 0, name: 1 } }).sort({ age: -1 }).toArray();
    assert.deepEqual(found, [{ name: 'cy' }, { name: 'ann' }]);
    const plan = await c.find({ age: { $gte: 30 } }).explain('queryPlanner');
    assert.equal(plan.queryPlanner.winningPlan.inputStage.stage, 'IXSCAN');
    const u = await c.updateOne({ name: 'dee' }, { $set: { age: 19 } }, { upsert: true });
    assert.equal(u.upsertedCount, 1);
    const after = await c.findOneAndUpdate({ name: 'bob' }, { $inc: { age: 1 } }, { returnDocument: 'after' });
    assert.equal(after.age, 26);
    await c.insertOne({ _id: 'x' });
    await assert.rejects(c.insertOne({ _id: 'x' }), (e) => e.code === 11000 && e.keyValue._id === 'x');
    const [avg] = await c.aggregate([{ $match: { age: { $exists: true } } }, { $group: { _id: null, a: { $avg: '$age' } } }]).toArray();
    assert.equal(avg.a, (31 + 26 + 40 + 19) / 4);
    await db.dropDatabase();
  } finally {
    await client.close();
  }
}

main(process.argv[2]).catch((e) => { console.error(e); process.exit(1); });
