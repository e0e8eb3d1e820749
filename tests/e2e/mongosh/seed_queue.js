// Seed pattern: a FIFO work queue claimed with findAndModify (sort on an
// indexed {state, created}), on a standard and on a capped collection. See
// examples/queue.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_queue');
d.dropDatabase();

function fill(q, messages) {
  q.createIndex({state: 1, created: 1});
  // newest first, so only the sort on created makes the queue FIFO
  for (let i = messages.length - 1; i >= 0; i--)
    q.insertOne({state: 0, created: new Date(Date.UTC(2011, 1, 24, 16, 29, i)), message: messages[i]});
}
function drain(q) {
  const got = [];
  for (;;) {
    const item = q.findOneAndUpdate({state: 0}, {$set: {state: 1}}, {sort: {created: 1}});
    if (item === null) return got;
    eq(item.state, 0, 'findAndModify returns the item before the update');
    got.push(item.message);
  }
}

fill(d.queue, ['hello world', 'second', 'third']);
ixscan(d.queue, {state: 0}, {created: 1}, 'state_1_created_1');
eq(drain(d.queue), ['hello world', 'second', 'third'], 'FIFO claims');
eq(d.queue.countDocuments({state: 1}), 3, 'all processed');

// the raw command, as the seed writes it
fill(d.queue, ['fourth', 'fifth']);
const res = d.runCommand({findAndModify: 'queue', query: {state: 0}, sort: {created: 1}, remove: true});
eq(res.value.message, 'fourth', 'findAndModify remove: true');
eq(d.queue.countDocuments({message: 'fourth'}), 0, 'removed');

d.createCollection('capped_queue', {capped: true, size: 1 << 20});
fill(d.capped_queue, ['alpha', 'beta', 'gamma']);
ixscan(d.capped_queue, {state: 0}, {created: 1}, 'state_1_created_1');
eq(drain(d.capped_queue), ['alpha', 'beta', 'gamma'], 'FIFO claims on a capped collection');

d.createCollection('small_queue', {capped: true, size: 4096, max: 3});
fill(d.small_queue, ['m1', 'm2', 'm3', 'm4', 'm5']);
eq(d.small_queue.find().sort({created: 1}).toArray().map(x => x.message), ['m1', 'm2', 'm3'],
  'a full capped collection drops its oldest inserts, processed or not');
