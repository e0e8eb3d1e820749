// Seed pattern: review votes recorded by one update guarded by $ne. See
// examples/votes.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_votes');
d.dropDatabase();
const id = ObjectId(), alice = ObjectId(), bob = ObjectId();
d.reviews.insertOne({_id: id, text: 'Sturdy barrow.', helpful_votes: 0, voter_ids: []});
const vote = voter => d.reviews.updateOne({_id: id, voter_ids: {$ne: voter}},
  {$push: {voter_ids: voter}, $inc: {helpful_votes: 1}}).modifiedCount;
eq([vote(alice), vote(alice), vote(bob)], [1, 0, 1], '$ne guard lets each voter vote once');
const r = d.reviews.findOne({_id: id});
eq([r.helpful_votes, r.voter_ids.length], [2, 2], 'votes and voters agree');
// a replacement update loses a vote cast between its read and its write
const edited = d.reviews.findOne({_id: id});
eq(vote(ObjectId()), 1, 'a vote lands meanwhile');
edited.text = 'Sturdy barrow, edited.';
d.reviews.replaceOne({_id: id}, edited);
eq(d.reviews.findOne({_id: id}).helpful_votes, 2, 'the replacement lost the third vote');
