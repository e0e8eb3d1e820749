// A duplicate _id is rejected with code 11000 and a keyValue naming the key,
// by insertOne and by ordered and unordered insertMany, and the rejected
// write leaves the stored document unchanged.

load(__dirname + '/lib/checks.js');

// thrown runs fn and returns what it threw, failing if it threw nothing.
function thrown(fn, msg) {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error(`${msg}: no error`);
}

const d = db.getSiblingDB('e2e_mongosh_dupkey');
d.dropDatabase();
const c = d.items;
c.insertOne({_id: 1, v: 'first'});

let err = thrown(() => c.insertOne({_id: 1, v: 'second'}), 'insertOne duplicate');
eq(err.code, 11000, 'insertOne code');
eq(err.keyValue, {_id: 1}, 'insertOne keyValue');
if (!/E11000/.test(err.message)) throw new Error(`insertOne message lacks E11000: ${err.message}`);
eq(c.findOne({_id: 1}), {_id: 1, v: 'first'}, 'original document kept');

c.insertOne({_id: 'k'});
err = thrown(() => c.insertOne({_id: 'k'}), 'string _id duplicate');
eq([err.code, err.keyValue], [11000, {_id: 'k'}], 'string _id duplicate');

err = thrown(() => c.insertMany([{_id: 2}, {_id: 1}, {_id: 3}]), 'ordered insertMany');
eq(err.writeErrors.length, 1, 'ordered insertMany writeErrors');
eq([err.writeErrors[0].index, err.writeErrors[0].code], [1, 11000], 'ordered insertMany write error');
eq(c.find({_id: {$in: [2, 3]}}).toArray().map(x => x._id), [2], 'ordered insertMany stops at the error');

err = thrown(() => c.insertMany([{_id: 4}, {_id: 2}, {_id: 5}], {ordered: false}), 'unordered insertMany');
eq([err.writeErrors.length, err.writeErrors[0].index, err.writeErrors[0].code], [1, 1, 11000],
  'unordered insertMany write error');
eq(c.countDocuments({_id: {$in: [4, 5]}}), 2, 'unordered insertMany continues past the error');

d.dropDatabase();
