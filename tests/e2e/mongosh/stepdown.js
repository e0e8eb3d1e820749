// A step down of the one-member replica set, as an operator runs it from
// mongosh: without force it fails (no secondary to catch up); forced, the
// member is a secondary that refuses writes and serves the reads whose read
// preference allows a secondary, and rs.freeze(0) has it elected again.

load(__dirname + '/lib/checks.js');

const admin = db.getSiblingDB('admin');
const d = db.getSiblingDB('e2e_mongosh_stepdown');
d.dropDatabase();
d.c.insertMany([{_id: 1}, {_id: 2}, {_id: 3}]);

// codeOf is the code fn fails with (mongosh's retried write reports it
// without a codeName), 0 if it does not fail.
function codeOf(fn) {
  try {
    fn();
  } catch (e) {
    return e.code;
  }
  return 0;
}

eq(codeOf(() => rs.stepDown(10, 0)), 262, 'rs.stepDown without force');
eq(admin.runCommand({hello: 1}).isWritablePrimary, true, 'hello after the failed step down');

eq(admin.runCommand({replSetStepDown: 60, force: true}).ok, 1, 'forced step down');
const h = admin.runCommand({hello: 1});
eq([h.isWritablePrimary, h.secondary, 'primary' in h, 'electionId' in h], [false, true, false, false], 'hello of the secondary');
eq(rs.status().myState, 2, 'rs.status().myState');
eq(codeOf(() => d.c.insertOne({_id: 4})), 10107, 'insert on the secondary');
db.getMongo().setReadPref('primaryPreferred'); // a secondary serves reads that allow it
eq(d.c.countDocuments({}), 3, 'count on the secondary');
db.getMongo().setReadPref('primary');
eq(codeOf(() => rs.freeze(30)), 0, 'rs.freeze on the secondary');

eq(rs.freeze(0).info, 'unfreezing', 'rs.freeze(0)');
let primary = false;
for (let i = 0; i < 500 && !primary; i++) {
  primary = admin.runCommand({hello: 1}).isWritablePrimary;
  if (!primary) sleep(10);
}
eq(primary, true, 'elected again after rs.freeze(0)');
eq(rs.status().myState, 1, 'rs.status().myState after the election');
d.c.insertOne({_id: 4});
eq(d.c.countDocuments({}), 4, 'count after a write on the new primary');
d.dropDatabase();
