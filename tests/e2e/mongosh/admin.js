// Administrative commands answer the way tools expect: hello, ping,
// buildInfo, serverStatus (connections, opcounters), listDatabases, dbStats,
// collStats, latencyStats, and mongosh's replication helpers, which read the
// oplog's.

load(__dirname + '/lib/checks.js');

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

const admin = db.getSiblingDB('admin');

const hello = admin.runCommand({hello: 1});
eq([hello.ok, hello.isWritablePrimary], [1, true], 'hello');
check(typeof hello.maxWireVersion === 'number' && hello.maxWireVersion >= 6, `hello maxWireVersion ${hello.maxWireVersion}`);
check(hello.maxBsonObjectSize > 0 && hello.maxMessageSizeBytes > 0, 'hello size limits');
eq(admin.runCommand({isMaster: 1}).ismaster, true, 'isMaster');
eq(admin.runCommand({ping: 1}).ok, 1, 'ping');

const bi = admin.runCommand({buildInfo: 1});
check(typeof bi.version === 'string' && bi.version.length > 0, `buildInfo version ${bi.version}`);
check(Array.isArray(bi.versionArray), 'buildInfo versionArray');

const d = db.getSiblingDB('e2e_mongosh_admin');
d.dropDatabase();
const before = admin.runCommand({serverStatus: 1});
check(before.connections.current >= 1, `serverStatus connections.current ${before.connections.current}`);
for (const k of ['insert', 'query', 'update', 'delete', 'getmore', 'command']) {
  check(before.opcounters[k] !== undefined, `serverStatus opcounters.${k} missing`);
}
d.a.insertMany([{_id: 1, s: 'x'}, {_id: 2, s: 'yy'}, {_id: 3, s: 'zzz'}]);
d.b.insertOne({_id: 1});
const after = admin.runCommand({serverStatus: 1});
check(Number(after.opcounters.insert) - Number(before.opcounters.insert) >= 4,
  `opcounters.insert went from ${before.opcounters.insert} to ${after.opcounters.insert} after 4 inserts`);

const dbs = admin.runCommand({listDatabases: 1});
const mine = dbs.databases.find(x => x.name === 'e2e_mongosh_admin');
check(mine !== undefined, `listDatabases lacks e2e_mongosh_admin: ${EJSON.stringify(dbs)}`);
check(mine.sizeOnDisk !== undefined, 'listDatabases sizeOnDisk');
eq(admin.runCommand({listDatabases: 1, nameOnly: true, filter: {name: 'e2e_mongosh_admin'}}).databases,
  [{name: 'e2e_mongosh_admin'}], 'listDatabases nameOnly with filter');

const ds = d.runCommand({dbStats: 1});
eq([ds.ok, ds.db, ds.collections, ds.objects], [1, 'e2e_mongosh_admin', 2, 4], 'dbStats');

const cs = d.runCommand({collStats: 'a'});
eq([cs.ok, cs.ns, cs.count], [1, 'e2e_mongosh_admin.a', 3], 'collStats');
check(cs.size > 0, `collStats size ${cs.size}`);

// latencyStats: the insertMany above is one write
const ls = d.a.latencyStats({histograms: true})[0].latencyStats;
check(Number(ls.writes.ops) === 1 && ls.writes.histogram.length === 1 && Number(ls.writes.histogram[0].count) === 1,
  `latencyStats: ${EJSON.stringify(ls)}`);

// db.getReplicationInfo (behind rs.printReplicationInfo) reads
// local.oplog.rs's collStats and its first and last entries.
const ri = db.getReplicationInfo();
check(!ri.errmsg && ri.logSizeMB > 0 && ri.usedMB > 0 && ri.tFirst !== undefined && ri.tLast !== undefined,
  `getReplicationInfo: ${EJSON.stringify(ri)}`);
check(dbs.databases.some(x => x.name === 'local'), `listDatabases lacks local, which holds the oplog: ${EJSON.stringify(dbs)}`);

d.dropDatabase();
