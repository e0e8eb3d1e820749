// Change streams through the Node driver: collection.watch() with an
// event listener sees inserts, updates and deletes in order; a resumed
// stream (resumeAfter) continues after the given event; db.watch() with
// a $match stage sees only what it selects.
'use strict';
const assert = require('node:assert/strict');
const { MongoClient } = require('mongodb');

async function main(uri) {
  const client = new MongoClient(uri);
  await client.connect();
  try {
    const db = client.db('e2e_node_cs');
    await db.dropDatabase();
    await db.createCollection('events');
    const coll = db.collection('events');

    const stream = coll.watch([], { fullDocument: 'updateLookup' });
    const seen = [];
    const got = new Promise((resolve, reject) => {
      stream.on('change', (ev) => { seen.push(ev); if (seen.length === 3) resolve(); });
      stream.on('error', reject);
    });
    // the change listener opens the stream; wait for its first batch
    await new Promise((r) => setTimeout(r, 300));
    await coll.insertOne({ _id: 1, v: 1 });
    await coll.updateOne({ _id: 1 }, { $set: { v: 2 } });
    await coll.deleteOne({ _id: 1 });
    await got;
    await stream.close();
    assert.deepEqual(seen.map((e) => e.operationType), ['insert', 'update', 'delete']);
    assert.deepEqual(seen[1].updateDescription.updatedFields, { v: 2 });
    // looked up when read: the updated document, or null once deleted
    if (seen[1].fullDocument !== null) assert.deepEqual(seen[1].fullDocument, { _id: 1, v: 2 });

    const resumed = coll.watch([], { resumeAfter: seen[0]._id });
    const next = await resumed.next();
    assert.equal(next.operationType, 'update');
    await resumed.close();

    const filtered = db.watch([{ $match: { operationType: 'insert', 'fullDocument.keep': true } }]);
    await filtered.tryNext();
    await coll.insertMany([{ _id: 2, keep: false }, { _id: 3, keep: true }]);
    const only = await filtered.next();
    assert.equal(only.documentKey._id, 3);
    await filtered.close();
  } finally {
    await client.close();
  }
}

main(process.argv[2]).then(() => console.log('change streams ok'), (err) => { console.error(err); process.exit(1); });
