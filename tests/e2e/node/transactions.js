// The Node driver against a plain mongodb://host:port URI: it discovers
// Folio as a one-member replica set's primary, so sessions and
// transactions work. Seed 002's transfer runs as withTransaction from 8
// concurrent sessions and keeps the total balance; an aborted transaction
// leaves no trace; a second writer of a document gets WriteConflict (112)
// with the TransientTransactionError label; retryable writes are on.
'use strict';
const assert = require('node:assert/strict');
const { MongoClient } = require('mongodb');

async function main(uri) {
  const client = new MongoClient(uri);
  await client.connect();
  try {
    const db = client.db('e2e_node_txn');
    await db.dropDatabase();
    const accounts = db.collection('accounts');
    const n = 10, start = 1000;
    await accounts.insertMany(Array.from({ length: n }, (_, i) => ({ _id: i, balance: start })));

    const worker = async (seed) => {
      const session = client.startSession();
      try {
        for (let i = 0; i < 20; i++) {
          const from = (seed * 7 + i) % n, to = (seed * 3 + i * 5 + 1) % n, amount = (i % 9) + 1;
          if (from === to) continue;
          await session.withTransaction(async () => {
            await accounts.updateOne({ _id: from }, { $inc: { balance: -amount } }, { session });
            await accounts.updateOne({ _id: to }, { $inc: { balance: amount } }, { session });
          });
        }
      } finally {
        await session.endSession();
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, s) => worker(s)));
    const [{ total }] = await accounts.aggregate([{ $group: { _id: null, total: { $sum: '$balance' } } }]).toArray();
    assert.equal(total, n * start, 'total balance');

    const s1 = client.startSession(), s2 = client.startSession();
    s1.startTransaction();
    await accounts.insertOne({ _id: 'ghost' }, { session: s1 });
    assert.equal(await accounts.countDocuments({ _id: 'ghost' }, { session: s1 }), 1, 'own write visible inside');
    assert.equal(await accounts.countDocuments({ _id: 'ghost' }), 0, 'uncommitted write invisible outside');
    await s1.abortTransaction();
    assert.equal(await accounts.countDocuments({ _id: 'ghost' }), 0, 'aborted write gone');

    s1.startTransaction();
    s2.startTransaction();
    await accounts.updateOne({ _id: 0 }, { $set: { x: 1 } }, { session: s1 });
    await assert.rejects(
      accounts.updateOne({ _id: 0 }, { $set: { x: 2 } }, { session: s2 }),
      (e) => e.code === 112 && e.hasErrorLabel('TransientTransactionError'),
      'second writer conflicts');
    await s1.commitTransaction();
    await s2.abortTransaction().catch(() => {});
    await s1.endSession();
    await s2.endSession();
    await db.dropDatabase();
  } finally {
    await client.close();
  }
}

main(process.argv[2]).catch((e) => { console.error(e); process.exit(1); });
