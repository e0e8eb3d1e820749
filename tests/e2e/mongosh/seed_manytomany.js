// Seed pattern: many-to-many with an array key (products hold their category
// ids under a multikey index). See examples/manytomany.

function eq(actual, expected, msg) {
  const a = EJSON.stringify(actual), e = EJSON.stringify(expected);
  if (a !== e) throw new Error(`${msg}: got ${a}, want ${e}`);
}
function ixscan(coll, filter, sort, index) {
  const cmd = {find: coll.getName(), filter: filter};
  if (sort) cmd.sort = sort;
  const plan = coll.getDB().runCommand({explain: cmd, verbosity: 'queryPlanner'}).queryPlanner.winningPlan;
  let s = plan;
  while (s && s.stage !== 'IXSCAN') s = s.inputStage;
  eq(s ? s.indexName : plan.stage, index, `explain ${coll.getName()} ${EJSON.stringify(filter)}`);
}

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
