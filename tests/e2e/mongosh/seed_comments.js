// Seed pattern: comments stored three ways — one document per comment
// (slug/full_slug), all embedded (nested replies, $slice pages) and hybrid
// buckets (findAndModify upsert with fields and new). See examples/comments.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_comments');
d.dropDatabase();
const posted = i => new Date(Date.UTC(2012, 1, 8, 12 + i, 21, 8));
const slugPart = i => (0x34db + i * 0x1f1).toString(16);
const stamp = t => t.toISOString().slice(0, 19).replace(/[-T:]/g, '.');
const escape = s => s.replace(/[.*+?^${}()|[\]\\\/]/g, '\\$&');

// one document per comment
const c = d.comments;
c.createIndex({discussion_id: 1, posted: 1});
c.createIndex({discussion_id: 1, full_slug: 1});
c.createIndex({discussion_id: 1, slug: 1});
function addComment(i, parentSlug, text) {
  let slug = slugPart(i), full = stamp(posted(i)) + ':' + slugPart(i);
  if (parentSlug) {
    const parent = c.findOne({discussion_id: 1, slug: parentSlug});
    slug = parent.slug + '/' + slug;
    full = parent.full_slug + '/' + full;
  }
  c.insertOne({discussion_id: 1, slug: slug, full_slug: full, posted: posted(i), author: {id: i, name: 'Rick'}, text: text});
  return slug;
}
const a = addComment(0, null, 'A'), b = addComment(1, null, 'B'), a1 = addComment(2, a, 'A.1');
addComment(3, b, 'B.1'); addComment(4, a1, 'A.1.a'); addComment(5, a, 'A.2');
const texts = cur => cur.toArray().map(x => x.text);
eq(texts(c.find({discussion_id: 1}).sort({posted: 1}).skip(2).limit(2)), ['A.1', 'B.1'], 'time-ordered page');
ixscan(c, {discussion_id: 1}, {posted: 1}, 'discussion_id_1_posted_1');
eq(texts(c.find({discussion_id: 1}).sort({full_slug: 1})), ['A', 'A.1', 'A.1.a', 'A.2', 'B', 'B.1'], 'thread order');
ixscan(c, {discussion_id: 1}, {full_slug: 1}, 'discussion_id_1_full_slug_1');
const one = c.findOne({discussion_id: 1, slug: a1});
eq(one.text, 'A.1', 'by slug');
ixscan(c, {discussion_id: 1, slug: a1}, null, 'discussion_id_1_slug_1');
const sub = {discussion_id: 1, full_slug: new RegExp('^' + escape(one.full_slug))};
eq(texts(c.find(sub).sort({full_slug: 1})), ['A.1', 'A.1.a'], 'subthread by escaped prefix');
ixscan(c, sub, {full_slug: 1}, 'discussion_id_1_full_slug_1');

// all comments embedded
d.discussion.insertMany([{discussion_id: 1, comments: []}, {discussion_id: 2, replies: []}]);
for (let i = 0; i < 7; i++)
  d.discussion.updateOne({discussion_id: 1}, {$push: {comments: {posted: posted(i), author: {id: i, name: 'Rick'}, text: 'c' + i}}});
const page = (skip, limit) => d.discussion.findOne({discussion_id: 1}, {comments: {$slice: [skip, limit]}}).comments.map(x => x.text);
eq(page(3, 3), ['c3', 'c4', 'c5'], '$slice page');
eq(page(6, 3), ['c6'], '$slice last page');
eq(page(4, 1), ['c4'], '$slice one by position');
const push = (path, text) => d.discussion.updateOne({discussion_id: 2}, {$push: {[path]: {text: text, replies: []}}});
push('replies', 'A'); push('replies', 'B'); push('replies.0.replies', 'A.1'); push('replies.0.replies', 'A.2');
push('replies.0.replies.1.replies', 'A.2.a'); push('replies.1.replies', 'B.1');
const walk = rs => rs.flatMap(r => [r.text, ...walk(r.replies)]);
eq(walk(d.discussion.findOne({discussion_id: 2}).replies), ['A', 'A.1', 'A.2', 'A.2.a', 'B', 'B.1'], 'nested replies');

// hybrid buckets
const SIZE = 3;
d.comment_buckets.createIndex({discussion_id: 1, bucket: 1});
d.comment_buckets.createIndex({discussion_id: 1, 'comments.slug': 1});
d.bucket_discussions.insertOne({_id: 1, num_buckets: 1});
function addToBucket(slug, text) {
  const disc = d.bucket_discussions.findOne({_id: 1});
  // the seed's find_and_modify(query, update, fields=, upsert=, new=) as the raw command
  const res = d.runCommand({findAndModify: 'comment_buckets', query: {discussion_id: 1, bucket: disc.num_buckets},
    update: {$inc: {count: 1}, $push: {comments: {slug: slug, text: text}}}, fields: {count: 1}, upsert: true, new: true});
  eq(Object.keys(res.value).sort(), ['_id', 'count'], 'fields projects the returned bucket');
  if (res.value.count > SIZE)
    d.bucket_discussions.updateOne({_id: 1, num_buckets: disc.num_buckets}, {$inc: {num_buckets: 1}});
}
for (let i = 0; i < 10; i++) addToBucket(slugPart(i), 'c' + i);
eq(d.comment_buckets.find({discussion_id: 1}).sort({bucket: 1}).toArray().map(b => b.count), [4, 4, 2], 'bucket counts');
ixscan(d.comment_buckets, {discussion_id: 1, bucket: 2}, null, 'discussion_id_1_bucket_1');
function findComments(skip, limit) {
  const out = [];
  for (const b of d.comment_buckets.find({discussion_id: 1}, {bucket: 1}).sort({bucket: 1}).toArray()) {
    const p = d.comment_buckets.findOne({discussion_id: 1, bucket: b.bucket}, {count: 1, comments: {$slice: [skip, limit]}});
    out.push(...p.comments.map(x => x.text));
    skip = Math.max(0, skip - p.count);
    limit -= p.comments.length;
    if (limit === 0) break;
  }
  return out;
}
eq(findComments(3, 4), ['c3', 'c4', 'c5', 'c6'], 'page across buckets');
eq(findComments(8, 5), ['c8', 'c9'], 'last page');
const bySlug = {discussion_id: 1, 'comments.slug': slugPart(5)};
eq(d.comment_buckets.findOne(bySlug, {comments: 1}).comments.find(x => x.slug === slugPart(5)).text, 'c5', 'comment by slug');
ixscan(d.comment_buckets, bySlug, null, 'discussion_id_1_comments.slug_1');

// Shard keys: comments by discussion and full_slug, buckets by discussion
// and bucket number; through a router, shardCollection runs on admin with the
// full namespace.
for (const [coll, key] of [['comments', {discussion_id: 1, full_slug: 1}], ['comment_buckets', {discussion_id: 1, bucket: 1}]]) {
  const ns = d.getName() + '.' + coll;
  eq(db.adminCommand({shardCollection: ns, key: key}).collectionsharded, ns, 'shardCollection ' + coll);
  eq([d.runCommand({collStats: coll}).sharded, d.runCommand({collStats: coll}).nchunks], [true, 1], 'collStats ' + coll);
}
