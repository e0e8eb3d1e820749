// Time series collections through the shell: db.createCollection with
// timeseries and expireAfterSeconds, listCollections' type, inserts,
// finds and aggregations on measurements, deletes, updates of the
// metaField (others refused), stats() and $indexStats, drop.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_mongosh_timeseries');
d.dropDatabase();
d.createCollection('weather', {timeseries: {timeField: 'ts', metaField: 'sensor', granularity: 'hours'}, expireAfterSeconds: 86400 * 3650});
const info = d.getCollectionInfos({name: 'weather'})[0];
eq([info.type, info.options.timeseries.timeField, info.options.timeseries.granularity], ['timeseries', 'ts', 'hours'], 'listCollections');

const t0 = new Date('2026-11-01T00:00:00Z');
const docs = [];
for (let i = 0; i < 48; i++) {
  docs.push({ts: new Date(t0.getTime() + i * 3600 * 1000), sensor: {id: i % 2}, temp: 10 + i});
}
eq(Object.keys(d.weather.insertMany(docs).insertedIds).length, 48, 'insertMany');
eq(d.weather.countDocuments({}), 48, 'count');
eq(d.weather.countDocuments({'sensor.id': 1, ts: {$gte: new Date(t0.getTime() + 24 * 3600 * 1000)}}), 12, 'count of one sensor on the second day');
const one = d.weather.findOne({temp: 20});
eq(Object.keys(one).slice(0, 2), ['ts', 'sensor'], 'a measurement starts with time and meta');
const byDay = d.weather.aggregate([
  {$match: {'sensor.id': 0}},
  {$group: {_id: {$dateTrunc: {date: '$ts', unit: 'day'}}, n: {$sum: 1}, max: {$max: '$temp'}}},
  {$sort: {_id: 1}},
]).toArray();
eq(byDay.map(x => [x.n, x.max]), [[12, 32], [12, 56]], 'daily groups of sensor 0');
eq(d.weather.deleteMany({temp: {$lt: 20}}).deletedCount, 10, 'deleteMany');
eq(d.weather.countDocuments({}), 38, 'count after delete');

const moved = d.weather.updateMany({'sensor.id': 1}, {$set: {'sensor.site': 'north'}});
eq([moved.matchedCount, moved.modifiedCount], [19, 19], 'updateMany of the metaField counts measurements');
eq(d.weather.countDocuments({'sensor.site': 'north'}), 19, 'the meta update is read back');
let code = 0;
try {
  d.weather.updateMany({temp: 30}, {$set: {temp: 31}});
} catch (e) {
  code = e.code;
}
eq(code, 72, 'an update of a measurement field is refused');

// $out into a time series collection (MongoDB 7.0.3): created with the
// options, then replaced, keeping them.
d.weather.aggregate([{$match: {'sensor.id': 0}}, {$out: {db: d.getName(), coll: 'sensor0', timeseries: {timeField: 'ts', metaField: 'sensor'}}}]);
eq(d.getCollectionInfos({name: 'sensor0'})[0].type, 'timeseries', '$out made a time series collection');
eq(d.sensor0.countDocuments({}), d.weather.countDocuments({'sensor.id': 0}), '$out wrote the measurements');
d.weather.aggregate([{$match: {'sensor.id': 1}}, {$out: 'sensor0'}]);
eq(d.sensor0.countDocuments({'sensor.id': 1}), d.weather.countDocuments({'sensor.id': 1}), '$out replaced them');
d.sensor0.drop();

// The shell's stats() ($collStats) describes the buckets.
const stats = d.weather.stats();
eq([stats.timeseries.bucketsNs, stats.timeseries.bucketCount > 0, stats.count], [d.getName() + '.system.buckets.weather', true, undefined], 'stats() of a time series collection');
eq(d.weather.aggregate([{$indexStats: {}}]).toArray().map(x => x.key), [{sensor: 1, ts: 1}], '$indexStats on the measurements');

d.weather.drop();
eq(d.getCollectionNames().filter(n => n !== 'system.views'), [], 'drop');
print('timeseries: ok');
