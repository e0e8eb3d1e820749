// Seed pattern: one->squillions, messages referencing their host, the host
// embedding only the latest ones ($push with $each/$sort/$slice). See
// examples/squillions.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_squillions');
d.dropDatabase();
const KEEP = 5;
d.hosts.createIndex({ipaddr: 1}, {unique: true});
d.logmsg.createIndex({host: 1, time: -1});
d.hosts.insertOne({ipaddr: '127.66.66.66', hostname: 'goofy.example.com', logmsgs: []});
function logMessage(ip, now, msg) {
  const host = d.hosts.findOne({ipaddr: ip}, {_id: 1});  // do not ship the whole host
  eq(Object.keys(host), ['_id'], 'projection {_id: 1}');
  d.logmsg.insertOne({time: now, message: msg, ipaddr: ip, host: host._id});
  d.hosts.updateOne({_id: host._id}, {$push: {logmsgs: {$each: [{time: now, message: msg}], $sort: {time: 1}, $slice: -KEEP}}});
}
for (const i of [0, 1, 2, 3, 11, 4, 5, 6, 10, 7, 8, 9])
  logMessage('127.66.66.66', new Date(Date.UTC(2014, 2, 28, 9, 42, i)), 'message ' + i);
ixscan(d.hosts, {ipaddr: '127.66.66.66'}, null, 'ipaddr_1');
const host = d.hosts.findOne({ipaddr: '127.66.66.66'});
eq(host.logmsgs.map(m => m.message), ['message 7', 'message 8', 'message 9', 'message 10', 'message 11'], 'capped embedded list');
eq(d.logmsg.countDocuments({host: host._id}), 12, 'every message on the many side');
ixscan(d.logmsg, {host: host._id}, {time: -1}, 'host_1_time_-1');
