// mongosh logged in with a user URI (authSource e2e_auth): its readWrite
// role lets it write and read e2e_auth, and nothing else.

const d = db.getSiblingDB('e2e_auth');
d.items.insertOne({_id: 1, name: 'pen'});
const doc = d.items.findOne({_id: 1});
if (!doc || doc.name !== 'pen') throw new Error(`findOne: ${JSON.stringify(doc)}`);
const st = d.runCommand({connectionStatus: 1});
const users = st.authInfo.authenticatedUsers;
if (users.length !== 1 || users[0].user !== 'appuser' || users[0].db !== 'e2e_auth') {
  throw new Error(`connectionStatus: ${JSON.stringify(st)}`);
}
let err = null;
try {
  db.getSiblingDB('e2e_other').items.insertOne({_id: 1});
} catch (e) {
  err = e;
}
if (err === null || err.code !== 13) throw new Error(`insert elsewhere: ${err}`);
