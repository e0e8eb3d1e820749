// Seed pattern: embed children that only appear inside their parent (steps
// of a how-to guide), reference children shown on their own (blog comments
// by post_id, through an index). See examples/embedding.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_embedding');
d.dropDatabase();

// embed: steps live inside the guide
d.guides.insertOne({title: 'How to soft-boil an egg', steps: [
  {desc: 'Bring a pot of water to boil.', materials: ['water', 'eggs']},
  {desc: 'Gently add the eggs and cook for four minutes.', materials: ['egg timer']},
  {desc: 'Cool the eggs under running water.'}]});
eq(d.guides.findOne({title: 'How to soft-boil an egg'}).steps.length, 3, 'one read returns all steps');
eq(d.guides.countDocuments({'steps.materials': 'egg timer'}), 1, 'query into embedded steps');

// reference: comments point at their post
d.comments.createIndex({post_id: 1});
const herbs = ObjectId(), tomatoes = ObjectId();
d.posts.insertMany([{_id: herbs, title: 'Cultivating herbs'}, {_id: tomatoes, title: 'Staking tomatoes'}]);
d.comments.insertMany([
  {post_id: herbs, posted: ISODate('2011-02-26T17:00:00Z'), username: 'zjones', text: 'Indeed, basil is a hearty herb!'},
  {post_id: tomatoes, posted: ISODate('2011-02-26T17:01:00Z'), username: 'kbanker', text: 'Bamboo works well.'},
  {post_id: herbs, posted: ISODate('2011-02-26T17:02:00Z'), username: 'asophist', text: 'Mint takes over.'}]);
eq(d.posts.findOne({_id: herbs}).title, 'Cultivating herbs', 'post');
eq(d.comments.find({post_id: herbs}).sort({posted: 1}).toArray().map(c => c.username), ['zjones', 'asophist'], 'comments of the post');
ixscan(d.comments, {post_id: herbs}, null, 'post_id_1');
eq(d.comments.find().sort({posted: -1}).limit(2).toArray().map(c => c.username), ['asophist', 'kbanker'], 'latest comments across posts');
