// Seed pattern: many-to-many with an array key (products hold their category
// ids under a multikey index). See examples/manytomany.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_manytomany');
d.dropDatabase();
const epiphytes = ObjectId(), greenhouse = ObjectId(), orchid = ObjectId();
d.categories.insertMany([{_id: epiphytes, title: 'Epiphytes'}, {_id: greenhouse, title: 'Greenhouse flowers'}]);
d.products.insertMany([
  {_id: orchid, name: 'Dragon Orchid', category_ids: [epiphytes, greenhouse]},
  {name: 'Staghorn Fern', category_ids: [epiphytes]},
  {name: 'Tea Rose', category_ids: [greenhouse]}]);
d.products.createIndex({category_ids: 1});

eq(d.products.find({category_ids: epiphytes}).sort({name: 1}).toArray().map(p => p.name),
  ['Dragon Orchid', 'Staghorn Fern'], 'products of a category');
ixscan(d.products, {category_ids: epiphytes}, null, 'category_ids_1');
const product = d.products.findOne({_id: orchid});
eq(d.categories.find({_id: {$in: product.category_ids}}).sort({title: 1}).toArray().map(c => c.title),
  ['Epiphytes', 'Greenhouse flowers'], 'categories of a product');
