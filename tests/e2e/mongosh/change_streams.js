// Change streams through mongosh: db.coll.watch() and tryNext() see the
// writes after the stream opened, with resume tokens a resumed stream
// continues from, and db.getMongo().watch() sees every database.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_mongosh_cs');
d.dropDatabase();
d.createCollection('events');

const cs = d.events.watch();
d.events.insertOne({_id: 1, a: 1});
d.events.updateOne({_id: 1}, {$set: {a: 2}, $unset: {b: ''}});
d.events.deleteOne({_id: 1});
const events = [];
while (events.length < 3) {
  const ev = cs.tryNext();
  if (ev) events.push(ev);
}
eq(events.map((e) => e.operationType), ['insert', 'update', 'delete'], 'operation types');
eq(events[1].updateDescription, {updatedFields: {a: 2}, removedFields: [], truncatedArrays: []}, 'updateDescription');
cs.close();

const resumed = d.events.watch([], {resumeAfter: events[1]._id});
let next = null;
while (!next) next = resumed.tryNext();
eq(next.operationType, 'delete', 'resumed after the update');
resumed.close();

const all = db.getMongo().watch();
d.getSiblingDB('e2e_mongosh_cs2').c.insertOne({_id: 'x'});
let ev = null;
while (!ev) ev = all.tryNext();
eq(ev.ns, {db: 'e2e_mongosh_cs2', coll: 'c'}, 'deployment stream');
all.close();
