// Seed pattern: dynamic attributes in a subdocument with sparse indexes, and
// as {n, v} pairs under one compound index queried with $elemMatch. See
// examples/attributes.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_attributes');
d.dropDatabase();

d.products.insertMany([
  {sku: 'ebd-123', name: 'Hi-Fi Earbuds', type: 'Headphone', attrs: {color: 'silver', freq_low: 20, freq_hi: 22000, weight: 0.5}},
  {sku: 'ebd-456', name: 'Bass Earbuds', type: 'Headphone', attrs: {color: 'black', freq_low: 40, freq_hi: 18000, weight: 0.4}},
  {sku: 'ssd-456', name: 'Mini SSD Drive', type: 'Hard Drive', attrs: {interface: 'SATA', capacity: 1.2 * 1024 * 1024 * 1024, rotation: 7200, form_factor: 2.5}}]);
d.products.createIndex({'attrs.freq_low': 1, 'attrs.freq_hi': 1}, {sparse: true});
d.products.createIndex({'attrs.rotation': 1}, {sparse: true});
const wide = {'attrs.freq_low': {$lte: 20}, 'attrs.freq_hi': {$gte: 20000}};
eq(d.products.find(wide).toArray().map(p => p.name), ['Hi-Fi Earbuds'], 'range on sparse compound index');
ixscan(d.products, wide, null, 'attrs.freq_low_1_attrs.freq_hi_1');
eq(d.products.find({'attrs.rotation': {$gte: 5400}}).toArray().map(p => p.name), ['Mini SSD Drive'], 'rotation');
ixscan(d.products, {'attrs.rotation': {$gte: 5400}}, null, 'attrs.rotation_1');
eq(d.products.find().hint('attrs.rotation_1').toArray().length, 1, 'sparse index leaves out documents without the field');

d.products_nv.insertMany([
  {sku: 'ebd-123', name: 'Hi-Fi Earbuds', attrs: [{n: 'color', v: 'silver'}, {n: 'freq_low', v: 20}, {n: 'freq_hi', v: 22000}, {n: 'weight', v: 0.5}]},
  {sku: 'ebd-456', name: 'Bass Earbuds', attrs: [{n: 'color', v: 'black'}, {n: 'freq_low', v: 40}]},
  {sku: 'ssd-456', name: 'Mini SSD Drive', attrs: [{n: 'interface', v: 'SATA'}, {n: 'rotation', v: 7200}]}]);
d.products_nv.createIndex({'attrs.n': 1, 'attrs.v': 1});
const silver = {attrs: {$elemMatch: {n: 'color', v: 'silver'}}};
eq(d.products_nv.find(silver).toArray().map(p => p.name), ['Hi-Fi Earbuds'], '$elemMatch pair');
ixscan(d.products_nv, silver, null, 'attrs.n_1_attrs.v_1');
const low = {attrs: {$elemMatch: {n: 'freq_low', v: {$lt: 30}}}};
eq(d.products_nv.find(low).toArray().map(p => p.name), ['Hi-Fi Earbuds'], '$elemMatch range');
ixscan(d.products_nv, low, null, 'attrs.n_1_attrs.v_1');
eq(d.products_nv.find({'attrs.n': 'rotation', 'attrs.v': 'SATA'}).toArray().map(p => p.name), ['Mini SSD Drive'],
  'without $elemMatch the pair may be split across elements');

// MongoDB 7.0's compound wildcard index: a known field before any
// attribute.
d.products.createIndex({type: 1, 'attrs.$**': 1});
const blackPhones = {type: 'Headphone', 'attrs.color': 'black'};
eq(d.products.find(blackPhones).toArray().map(p => p.name), ['Bass Earbuds'], 'type and any attribute');
ixscan(d.products, blackPhones, null, 'type_1_attrs.$**_1');
eq(d.products.find({type: 'Hard Drive'}).hint('type_1_attrs.$**_1').toArray().map(p => p.name), ['Mini SSD Drive'],
  'the known field alone');
