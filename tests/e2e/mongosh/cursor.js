// Cursor iteration: 500 documents read with batchSize 7 through mongosh's
// cursor and through raw find/getMore, every document once and in order;
// killCursors ends a cursor so that getMore on it fails with code 43.

load(__dirname + '/lib/checks.js');

const N = 500, B = 7;
const d = db.getSiblingDB('e2e_mongosh_cursor');
d.dropDatabase();
const docs = [];
for (let i = 0; i < N; i++) docs.push({_id: i, i: i, pad: 'x'.repeat(i % 50)});
// Shuffle so that sorted reads do not rely on insertion order.
for (let i = N - 1; i > 0; i--) {
  const j = (i * 7919) % (i + 1);
  [docs[i], docs[j]] = [docs[j], docs[i]];
}
d.c.insertMany(docs);

// mongosh's cursor.
const cur = d.c.find({}, {i: 1}).sort({i: 1}).batchSize(B);
let n = 0;
while (n <= N && cur.hasNext()) {
  eq(cur.next(), {_id: n, i: n}, `document ${n}`);
  n++;
}
eq(n, N, 'documents read through mongosh cursor');

// The same through the raw commands, checking each batch size.
let res = d.runCommand({find: 'c', sort: {i: 1}, batchSize: B});
let batch = res.cursor.firstBatch;
eq(batch.length, B, 'firstBatch size');
const seen = batch.map(x => x.i);
let id = res.cursor.id;
for (let rounds = 0; !id.isZero() && rounds <= N / B + 1; rounds++) {
  res = d.runCommand({getMore: id, collection: 'c', batchSize: B});
  batch = res.cursor.nextBatch;
  if (batch.length > B) throw new Error(`nextBatch of ${batch.length} > batchSize ${B}`);
  seen.push(...batch.map(x => x.i));
  id = res.cursor.id;
}
eq(id.isZero(), true, 'cursor exhausted');
eq(seen, Array.from({length: N}, (_, i) => i), 'find/getMore returns every document once, in order');

// limit with a smaller batchSize.
eq(d.c.find({i: {$gte: 100}}).sort({i: 1}).batchSize(B).limit(20).toArray().map(x => x.i),
  Array.from({length: 20}, (_, i) => 100 + i), 'limit 20 with batchSize 7');

// killCursors.
res = d.runCommand({find: 'c', batchSize: B});
id = res.cursor.id;
res = d.runCommand({killCursors: 'c', cursors: [id]});
eq(res.cursorsKilled.length === 1 && res.cursorsKilled[0].equals(id), true, 'cursorsKilled names the cursor');
let code = null;
try {
  d.runCommand({getMore: id, collection: 'c'});
} catch (err) {
  code = err.code;
}
eq(code, 43, 'getMore on a killed cursor is CursorNotFound');

d.dropDatabase();
