// Seed pattern: denormalizing many->one (part names in products) and
// one->many (product name in parts), and the host address in log messages.
// See examples/denormalize.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_denormalize');
d.dropDatabase();
const grommet = ObjectId(), blade = ObjectId(), sw = ObjectId();
d.parts.insertMany([
  {_id: grommet, partno: '123-aff-456', name: '#4 grommet', product_name: 'left-handed smoke shifter', product_catalog_number: 1234, qty: 94},
  {_id: blade, partno: '123-aff-457', name: 'fan blade assembly', product_name: 'left-handed smoke shifter', product_catalog_number: 1234, qty: 12},
  {_id: sw, partno: '123-aff-458', name: 'power switch', product_name: 'left-handed smoke shifter', product_catalog_number: 1234, qty: 40}]);
d.products.insertMany([
  {name: 'left-handed smoke shifter', manufacturer: 'Acme Corp', catalog_number: 1234,
    parts: [{id: grommet, name: '#4 grommet'}, {id: blade, name: 'fan blade assembly'}, {id: sw, name: 'power switch'}]},
  {name: 'right-handed smoke shifter', manufacturer: 'Acme Corp', catalog_number: 1235, parts: [{id: grommet, name: '#4 grommet'}]}]);
d.products.createIndex({catalog_number: 1}, {unique: true});
d.products.createIndex({'parts.id': 1});
d.parts.createIndex({product_catalog_number: 1});

// application-level join
const product = d.products.findOne({catalog_number: 1234});
const partIds = product.parts.map(p => p.id);
eq(d.parts.find({_id: {$in: partIds}}).toArray().length, 3, 'joined parts');
ixscan(d.products, {catalog_number: 1234}, null, 'catalog_number_1');

// many->one: a part rename rewrites every product that lists it
d.parts.updateOne({_id: grommet}, {$set: {name: '#4 rubber grommet'}});
let r = d.products.updateMany({'parts.id': grommet}, {$set: {'parts.$.name': '#4 rubber grommet'}});
eq(r.modifiedCount, 2, 'products rewritten');
eq(d.products.countDocuments({'parts.name': '#4 grommet'}), 0, 'no stale copy');
ixscan(d.products, {'parts.id': grommet}, null, 'parts.id_1');

// one->many: a product rename rewrites all its parts
r = d.parts.updateMany({product_catalog_number: 1234}, {$set: {product_name: 'smoke shifter, left'}});
eq(r.modifiedCount, 3, 'parts rewritten');
ixscan(d.parts, {product_catalog_number: 1234}, null, 'product_catalog_number_1');

// log messages carry the host address
d.logmsg.createIndex({ipaddr: 1, time: -1});
for (let i = 0; i < 20; i++)
  d.logmsg.insertOne({time: new Date(Date.UTC(2014, 2, 28, 9, 42, i)), message: 'cpu is on fire!', ipaddr: i % 2 ? '127.0.0.2' : '127.66.66.66'});
const last = d.logmsg.find({ipaddr: '127.66.66.66'}).sort({time: -1}).limit(5).toArray();
eq([last.length, last[0].time], [5, new Date(Date.UTC(2014, 2, 28, 9, 42, 18))], 'latest messages of an address');
ixscan(d.logmsg, {ipaddr: '127.66.66.66'}, {time: -1}, 'ipaddr_1_time_-1');
