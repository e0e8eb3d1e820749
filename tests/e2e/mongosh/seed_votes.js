// Seed pattern: review votes recorded by one update guarded by $ne. See
// examples/votes.

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
