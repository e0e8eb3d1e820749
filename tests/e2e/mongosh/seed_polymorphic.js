// Seed pattern: polymorphic nodes in one collection, lazy and batched
// migrations, [name, value] property arrays under one index. See
// examples/polymorphic.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_polymorphic');
d.dropDatabase();
d.nodes.createIndex({url: 1}, {unique: true});
const docs = [];
for (let i = 0; i < 250; i++)
  docs.push(i % 2 ? {type: 'photo', url: '/photo/' + i, title: 'A photo', content: BinData(0, '/9g=')}
    : {type: 'page', url: '/page/' + i, title: 'A page', text: '...'});
d.nodes.insertMany(docs);
function nodeByUrl(url) {  // lazy migration: the application supplies the default
  const node = d.nodes.findOne({url: url});
  if (!('short_description' in node)) node.short_description = '';
  return node;
}
eq(nodeByUrl('/photo/1').short_description, '', 'lazy default');
ixscan(d.nodes, {url: '/photo/1'}, null, 'url_1');

// batched migration, 100 at a time
let rounds = 0;
for (;;) {
  const ids = d.nodes.find({short_description: {$exists: false}}, {_id: 1}).limit(100).toArray().map(n => n._id);
  if (ids.length === 0) break;
  d.nodes.updateMany({_id: {$in: ids}}, {$set: {short_description: ''}});
  rounds++;
}
eq(rounds, 3, 'three batches');
eq(d.nodes.countDocuments({short_description: {$exists: false}}), 0, 'all migrated');
eq(d.nodes.updateMany({}, {$set: {version: 2}}).modifiedCount, 250, 'migrate all at once');

// [name, value] property pairs
d.products.insertMany([
  {price: 499.99, title: 'Big and Fast Disk Drive', gb_capacity: 1000, properties: [['Seek Time', '5ms'], ['Rotational Speed', '15k RPM']]},
  {price: 99.99, title: 'Slow Disk Drive', gb_capacity: 500, properties: [['Seek Time', '12ms'], ['Rotational Speed', '5400 RPM']]}]);
d.products.createIndex({properties: 1});
eq(d.products.find({properties: ['Seek Time', '5ms']}).toArray().map(p => p.title), ['Big and Fast Disk Drive'], 'pair query');
ixscan(d.products, {properties: ['Seek Time', '5ms']}, null, 'properties_1');
