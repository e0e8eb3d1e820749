// Transactions through mongosh: seed 002's transfer with withTransaction
// from several sessions in turn keeps the total constant; an aborted
// transaction leaves no trace; uncommitted writes are invisible outside;
// and the second writer of a document gets WriteConflict (112) with the
// TransientTransactionError label.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_mongosh_txn');
d.dropDatabase();
const n = 6, start = 100;
d.accounts.insertMany(Array.from({length: n}, (_, i) => ({_id: i, balance: start})));

const sessions = Array.from({length: 4}, () => db.getMongo().startSession());
for (let i = 0; i < 40; i++) {
  const s = sessions[i % sessions.length];
  const from = i % n, to = (i * 7 + 3) % n, amount = (i % 9) + 1;
  if (from === to) continue;
  s.withTransaction(() => {
    const acc = s.getDatabase('e2e_mongosh_txn').accounts;
    acc.updateOne({_id: from}, {$inc: {balance: -amount}});
    acc.updateOne({_id: to}, {$inc: {balance: amount}});
  });
}
eq(d.accounts.aggregate([{$group: {_id: null, t: {$sum: '$balance'}}}]).toArray()[0].t, n * start, 'total balance');

const s1 = sessions[0], s2 = sessions[1];
s1.startTransaction();
s1.getDatabase('e2e_mongosh_txn').accounts.insertOne({_id: 'ghost'});
eq(s1.getDatabase('e2e_mongosh_txn').accounts.countDocuments({_id: 'ghost'}), 1, 'own write visible inside');
eq(d.accounts.countDocuments({_id: 'ghost'}), 0, 'uncommitted write invisible outside');
s1.abortTransaction();
eq(d.accounts.countDocuments({_id: 'ghost'}), 0, 'aborted write gone');

s1.startTransaction();
s2.startTransaction();
s1.getDatabase('e2e_mongosh_txn').accounts.updateOne({_id: 0}, {$set: {x: 1}});
let conflict = null;
try {
  s2.getDatabase('e2e_mongosh_txn').accounts.updateOne({_id: 0}, {$set: {x: 2}});
} catch (e) {
  conflict = e;
}
if (conflict === null) throw new Error('second writer did not conflict');
eq(conflict.code, 112, 'conflict code');
eq(conflict.errorLabels.includes('TransientTransactionError'), true, 'TransientTransactionError label');
s1.commitTransaction();
sessions.forEach(s => s.endSession());
d.dropDatabase();
