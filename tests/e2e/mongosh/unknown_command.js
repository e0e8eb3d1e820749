// An unknown command fails with code 59 (CommandNotFound) and leaves the
// connection usable.

const d = db.getSiblingDB('e2e_mongosh_unknown');
let err = null;
try {
  d.runCommand({noSuchCommandForFolio: 1});
} catch (e) {
  err = e;
}
if (err === null) throw new Error('unknown command succeeded');
if (err.code !== 59 || err.codeName !== 'CommandNotFound') {
  throw new Error(`unknown command: got code ${err.code} (${err.codeName}), want 59 (CommandNotFound)`);
}
if (d.runCommand({ping: 1}).ok !== 1) throw new Error('ping after unknown command failed');
