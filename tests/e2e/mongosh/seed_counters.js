// Seed pattern: pre-aggregated day counters, pre-allocated so $inc never
// grows the document, in a collection per period. See examples/counters.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_counters');
d.dropDatabase();
const nov = d.getCollection('sites-nov'), dec = d.getCollection('sites-dec');
function template(days) {
  const counts = {};
  for (let i = 1; i <= days; i++) counts[String(i)] = NumberInt(0);
  return {base: 'org.mongodb', path: '/', total: NumberInt(0), days: counts};
}
const page = {base: 'org.mongodb', path: '/'};
const size = () => bsonsize(nov.findOne(page));
nov.createIndex({base: 1, path: 1}, {unique: true});
dec.createIndex({base: 1, path: 1}, {unique: true});
nov.insertOne(template(30));
dec.insertOne(template(31));
const before = size();
for (let i = 0; i < 3; i++) nov.updateOne(page, {$inc: {total: NumberInt(1), 'days.5': NumberInt(1)}});
const doc = nov.findOne(page);
eq([doc.total, doc.days['5'], Object.keys(doc.days).length], [3, 3, 30], 'counters');
eq(size(), before, 'pre-allocated document does not grow');
ixscan(nov, page, null, 'base_1_path_1');
nov.updateOne(page, {$inc: {'days.31': NumberInt(1)}});
eq(size() > before, true, 'a counter that was not pre-allocated grows the document');
nov.drop();
eq(d.getCollectionNames(), ['sites-dec'], 'a period is dropped with its collection');
