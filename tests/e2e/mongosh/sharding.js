// Sharding helpers on Folio's one shard: sh.enableSharding,
// sh.shardCollection, sh.status() (which reads config.version, shards,
// databases, collections and chunks) and getShardDistribution ($collStats).

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_mongosh_sharding');
d.dropDatabase();
d.events.insertMany([{user: 1, n: 1}, {user: 2, n: 2}]);
d.events.createIndex({user: 1, n: 1});

eq(sh.enableSharding(d.getName()).ok, 1, 'enableSharding');
eq(sh.shardCollection(d.getName() + '.events', {user: 1}).collectionsharded, d.getName() + '.events', 'shardCollection');

const status = sh.status().value;
eq(status.shards.map(s => s._id), ['folio'], 'sh.status() shards');
const mine = status.databases.find(x => x.database._id === d.getName());
if (!mine) throw new Error('sh.status() lacks ' + d.getName() + ': ' + EJSON.stringify(status.databases));
const coll = mine.collections[d.getName() + '.events'];
eq(coll.shardKey, {user: 1}, 'sh.status() shard key');
eq(coll.chunkMetadata, [{shard: 'folio', nChunks: 1}], 'sh.status() chunks');

const dist = d.events.getShardDistribution().value;
eq(dist.Totals.docs, 2, 'getShardDistribution docs');
eq(dist.Totals.chunks, 1, 'getShardDistribution chunks');

// Another key for a sharded collection is refused.
let code = 0;
try {
  sh.shardCollection(d.getName() + '.events', {n: 1});
} catch (e) {
  code = e.code;
}
eq(code, 23, 'resharding with another key');
d.dropDatabase();
