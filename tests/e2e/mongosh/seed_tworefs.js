// Seed pattern: two-way references between people and tasks, reassigning a
// task on both sides. See examples/tworefs.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_tworefs');
d.dropDatabase();
const kate = ObjectId(), joe = ObjectId(), lesson = ObjectId(), grade = ObjectId(), books = ObjectId();
d.tasks.insertMany([
  {_id: lesson, description: 'Write lesson plan', owner: kate},
  {_id: grade, description: 'Grade homework', owner: kate},
  {_id: books, description: 'Order books', owner: joe}]);
d.people.insertMany([{_id: kate, name: 'Kate Monster', tasks: [lesson, grade]}, {_id: joe, name: 'Joe Bloggs', tasks: [books]}]);
d.tasks.createIndex({owner: 1});
d.people.createIndex({tasks: 1});
eq(d.people.findOne({tasks: lesson}).name, 'Kate Monster', 'owner from the people side');
eq(d.tasks.countDocuments({owner: kate}), 2, 'tasks from the task side');
ixscan(d.tasks, {owner: kate}, null, 'owner_1');
ixscan(d.people, {tasks: lesson}, null, 'tasks_1');
// reassign: three updates, not atomic together
d.people.updateOne({_id: kate}, {$pull: {tasks: lesson}});
d.people.updateOne({_id: joe}, {$addToSet: {tasks: lesson}});
d.tasks.updateOne({_id: lesson}, {$set: {owner: joe}});
eq(d.people.findOne({tasks: lesson}).name, 'Joe Bloggs', 'people side after reassign');
eq([d.tasks.countDocuments({owner: joe}), d.tasks.countDocuments({owner: kate})], [2, 1], 'task side after reassign');
