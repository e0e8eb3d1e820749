// Seed pattern: trees with a materialized path (prefix regex on an indexed
// path) and with ancestor lists (move a subtree; rename with 'ancestors.$'
// over many documents). See examples/trees.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_trees');
d.dropDatabase();

// materialized path
d.forum.createIndex({thread_id: 1});
d.forum.createIndex({path: 1});
const thread = ObjectId(), root = ObjectId(), soc = ObjectId();
const rootPath = root.toHexString(), socPath = rootPath + ':' + soc.toHexString();
d.forum.insertMany([
  {_id: root, depth: 0, path: null, created: ISODate('2011-02-26T17:18:01Z'), username: 'plotinus', body: "Who was Alexander the Great's teacher?", thread_id: thread},
  {_id: soc, depth: 1, path: rootPath, created: ISODate('2011-02-26T17:21:01Z'), username: 'asophist', body: 'It was definitely Socrates.', thread_id: thread},
  {depth: 2, path: socPath, created: ISODate('2011-02-26T17:22:01Z'), username: 'daletheia', body: 'Oh you sophist...It was actually Aristotle!', thread_id: thread},
  {depth: 1, path: rootPath, created: ISODate('2011-02-26T17:25:01Z'), username: 'seuclid', body: 'Ask the Macedonians.', thread_id: thread}]);
eq(d.forum.countDocuments({thread_id: thread}), 4, 'whole thread');
ixscan(d.forum, {thread_id: thread}, null, 'thread_id_1');
eq(d.forum.find({path: new RegExp('^' + rootPath)}).sort({created: 1}).toArray().map(p => p.username),
  ['asophist', 'daletheia', 'seuclid'], 'subtree by prefix regex');
eq(d.forum.find({path: new RegExp('^' + socPath)}).toArray().map(p => p.username), ['daletheia'], 'sub-subtree');
ixscan(d.forum, {path: new RegExp('^' + socPath)}, null, 'path_1');

// ancestor lists
const cats = d.categories;
cats.createIndex({'ancestors._id': 1});
function generateAncestors(id, parentId) {
  const list = [];
  let parent;
  while (parentId && (parent = cats.findOne({_id: parentId}))) {
    list.unshift({_id: parent._id, name: parent.name, slug: parent.slug});
    parentId = parent.parent_id;
  }
  cats.updateOne({_id: id}, {$set: {ancestors: list}});
}
function add(name, parentId) {
  const id = cats.insertOne({parent_id: parentId, name: name, slug: name.toLowerCase(), ancestors: []}).insertedId;
  generateAncestors(id, parentId);
  return id;
}
const names = id => cats.findOne({_id: id}).ancestors.map(a => a.name);
const home = add('Home', null), outdoors = add('Outdoors', home), tools = add('Tools', outdoors);
const seedlings = add('Seedlings', outdoors), planters = add('Planters', seedlings), gardening = add('Gardening', home);
eq(names(planters), ['Home', 'Outdoors', 'Seedlings'], 'initial ancestors');

// move Outdoors under Gardening
cats.updateOne({_id: outdoors}, {$set: {parent_id: gardening}});
generateAncestors(outdoors, gardening);
cats.find({'ancestors._id': outdoors}).forEach(c => generateAncestors(c._id, c.parent_id));
ixscan(cats, {'ancestors._id': outdoors}, null, 'ancestors._id_1');
eq(names(planters), ['Home', 'Gardening', 'Outdoors', 'Seedlings'], 'ancestors after the move');
eq(names(tools), ['Home', 'Gardening', 'Outdoors'], 'Tools after the move');

// rename Outdoors: replace it, then rewrite its copies with 'ancestors.$' (multi)
const doc = cats.findOne({_id: outdoors});
doc.name = 'The Great Outdoors';
cats.replaceOne({_id: outdoors}, doc);
const r = cats.updateMany({'ancestors._id': outdoors}, {$set: {'ancestors.$': {_id: doc._id, name: doc.name, slug: doc.slug}}});
eq([r.matchedCount, r.modifiedCount], [3, 3], 'positional multi update counts');
eq(names(planters), ['Home', 'Gardening', 'The Great Outdoors', 'Seedlings'], 'renamed ancestor');
