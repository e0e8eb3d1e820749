// Seed pattern: compensation-driven transactions (order states with
// compensation) and two-phase-commit transfers with idempotent retire,
// rollback and cleanup. See examples/transactions.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_transactions');
d.dropDatabase();

// compensation: order states and item-by-item reservation
d.inventory.createIndex({sku: 1, state: 1});
d.inventory.insertMany([1, 2, 3].map(() => ({sku: 'wheelbarrow', state: 'AVAILABLE'})));
d.orders.insertMany([{_id: 1, state: 'CART'}, {_id: 2, state: 'CART'}]);
function checkout(orderId, qty) {
  if (d.orders.updateOne({_id: orderId, state: 'CART'}, {$set: {state: 'PRE-AUTHORIZE'}}).modifiedCount !== 1) return false;
  for (let i = 0; i < qty; i++) {
    const item = d.inventory.findOneAndUpdate({sku: 'wheelbarrow', state: 'AVAILABLE'}, {$set: {state: 'IN_CART', order_id: orderId}});
    if (item === null) {  // compensate
      d.inventory.updateMany({order_id: orderId, state: 'IN_CART'}, {$set: {state: 'AVAILABLE'}, $unset: {order_id: ''}});
      d.orders.updateOne({_id: orderId, state: 'PRE-AUTHORIZE'}, {$set: {state: 'CART'}});
      return false;
    }
  }
  d.orders.updateOne({_id: orderId, state: 'PRE-AUTHORIZE'}, {$set: {state: 'AUTHORIZED'}});
  return true;
}
eq(checkout(1, 2), true, 'order 1 authorized');
eq(checkout(2, 2), false, 'order 2 compensated');
eq(d.orders.find().sort({_id: 1}).toArray().map(o => o.state), ['AUTHORIZED', 'CART'], 'order states');
eq(d.inventory.countDocuments({sku: 'wheelbarrow', state: 'AVAILABLE'}), 1, 'released item is available');
ixscan(d.inventory, {sku: 'wheelbarrow', state: 'AVAILABLE'}, null, 'sku_1_state_1');

// two-phase commit transfers
const MAX = 60 * 1000;
d.transactions.createIndex({state: 1, ts: 1});
d.accounts.insertMany([{_id: 1, balance: 100, txns: []}, {_id: 2, balance: 0, txns: []}]);
function prepare(amt, src, dst, ts) {
  const txn = {_id: ObjectId(), state: 'new', ts: ts, amt: amt, src: src, dst: dst};
  d.transactions.insertOne(txn);
  if (d.accounts.updateOne({_id: src, balance: {$gte: amt}}, {$inc: {balance: -amt}, $push: {txns: txn._id}}).matchedCount === 0) {
    d.transactions.deleteOne({_id: txn._id});
    return null;
  }
  d.accounts.updateOne({_id: dst}, {$inc: {balance: amt}, $push: {txns: txn._id}});
  return txn;
}
function retire(txn) {
  for (const id of [txn.src, txn.dst]) d.accounts.updateOne({_id: id, txns: txn._id}, {$pull: {txns: txn._id}});
  d.transactions.deleteOne({_id: txn._id});
}
function commit(txn, now) {
  const r = d.transactions.updateOne({_id: txn._id, state: 'new', ts: {$gt: new Date(now - MAX)}}, {$set: {state: 'commit'}});
  if (r.modifiedCount !== 1) return false;
  retire(txn);
  return true;
}
function rollback(txn) {
  d.accounts.updateOne({_id: txn.src, txns: txn._id}, {$inc: {balance: txn.amt}, $pull: {txns: txn._id}});
  d.accounts.updateOne({_id: txn.dst, txns: txn._id}, {$inc: {balance: -txn.amt}, $pull: {txns: txn._id}});
  d.transactions.deleteOne({_id: txn._id});
}
function cleanup(now) {
  d.transactions.find({state: 'commit'}).toArray().forEach(retire);
  d.transactions.updateMany({state: 'new', ts: {$lt: new Date(now - MAX)}}, {$set: {state: 'rollback'}});
  d.transactions.find({state: 'rollback'}).toArray().forEach(rollback);
}
const balances = () => d.accounts.find().sort({_id: 1}).toArray().map(a => [a.balance, a.txns.length]);
const now = Date.now();

let t = prepare(55, 1, 2, new Date(now));
eq(balances(), [[45, 1], [55, 1]], 'prepared');
eq(commit(t, now), true, 'commit');
eq(balances(), [[45, 0], [55, 0]], 'retired');
retire(t);
eq(balances(), [[45, 0], [55, 0]], 'retire is idempotent');
eq(prepare(500, 1, 2, new Date(now)), null, 'insufficient funds');
eq(d.transactions.countDocuments(), 0, 'no trace of the failed transfer');

t = prepare(5, 2, 1, new Date(now));
d.transactions.updateOne({_id: t._id}, {$set: {state: 'commit'}});  // crash after commit
cleanup(now);
eq(balances(), [[50, 0], [50, 0]], 'cleanup retires committed transfers');

t = prepare(30, 1, 2, new Date(now - 2 * MAX));  // crash before commit
eq(commit(t, now), false, 'expired transfer does not commit');
ixscan(d.transactions, {state: 'new', ts: {$lt: new Date(now - MAX)}}, null, 'state_1_ts_1');
cleanup(now);
eq(balances(), [[50, 0], [50, 0]], 'cleanup rolls back expired transfers');
rollback(t);
eq(balances(), [[50, 0], [50, 0]], 'rollback is idempotent');
eq(d.transactions.countDocuments(), 0, 'no transaction left');
