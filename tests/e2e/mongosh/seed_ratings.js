// Seed pattern: a product's average rating, aggregated from its reviews
// ($match/$group) and cached with $set, or maintained with $set and $inc.
// See examples/ratings.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_ratings');
d.dropDatabase();
const id = ObjectId(), other = ObjectId();
d.products.insertMany([{_id: id, name: 'Extra Large Wheel Barrow'}, {_id: other, name: 'Trowel', average_review: 1}]);
d.reviews.createIndex({product_id: 1});
d.reviews.insertMany([5, 4, 4, 2].map(r => ({product_id: id, rating: r})).concat([{product_id: other, rating: 1}]));
const stats = d.reviews.aggregate([{$match: {product_id: id}},
  {$group: {_id: '$product_id', count: {$sum: 1}, total: {$sum: '$rating'}, average: {$avg: '$rating'}}}]).toArray();
eq(stats.map(s => [s.count, s.total, s.average]), [[4, 15, 3.75]], 'aggregated statistics');
d.products.updateOne({_id: id}, {$set: {total_reviews: stats[0].count, ratings_total: stats[0].total, average_review: stats[0].average}});
ixscan(d.reviews, {product_id: id}, null, 'product_id_1');
const ratings = d.reviews.find({product_id: id}, {rating: 1}).toArray().map(r => r.rating);
eq(ratings.reduce((x, y) => x + y) / ratings.length, 3.75, 'application loop agrees');
// incremental
const p = d.products.findOne({_id: id});
d.reviews.insertOne({product_id: id, rating: 5});
d.products.updateOne({_id: id}, {$set: {average_review: (p.ratings_total + 5) / (p.total_reviews + 1), ratings_total: p.ratings_total + 5},
  $inc: {total_reviews: 1}});
const q = d.products.findOne({_id: id});
eq([q.total_reviews, q.ratings_total, q.average_review], [5, 20, 4], 'incremental statistics');
eq(d.products.find().sort({average_review: -1}).limit(1).next().name, 'Extra Large Wheel Barrow', 'sort by cached average');
