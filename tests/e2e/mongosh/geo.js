// Geospatial queries through the shell: a 2dsphere index, $near with
// $maxDistance in meters, $geoWithin a polygon, $geoIntersects, the
// $geoNear stage, and the refusal of a malformed geometry (16755).

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_mongosh_geo');
d.dropDatabase();
eq(d.places.createIndex({loc: '2dsphere'}), 'loc_2dsphere', 'createIndex');
d.places.insertMany([
  {_id: 'paris', loc: {type: 'Point', coordinates: [2.3522, 48.8566]}},
  {_id: 'london', loc: {type: 'Point', coordinates: [-0.1276, 51.5072]}},
  {_id: 'berlin', loc: {type: 'Point', coordinates: [13.405, 52.52]}},
  {_id: 'madrid', loc: {type: 'Point', coordinates: [-3.7038, 40.4168]}},
]);
const near = d.places.find({loc: {$near: {$geometry: {type: 'Point', coordinates: [2.3522, 48.8566]}, $maxDistance: 1000 * 1000}}}).toArray();
eq(near.map(x => x._id), ['paris', 'london', 'berlin'], '$near within 1000 km, nearest first');
const box = {type: 'Polygon', coordinates: [[[-5, 40], [5, 40], [5, 50], [-5, 50], [-5, 40]]]};
eq(d.places.find({loc: {$geoWithin: {$geometry: box}}}).toArray().map(x => x._id).sort(), ['madrid', 'paris'], '$geoWithin');
eq(d.places.countDocuments({loc: {$geoIntersects: {$geometry: box}}}), 2, '$geoIntersects');
const byDistance = d.places.aggregate([
  {$geoNear: {near: {type: 'Point', coordinates: [13.405, 52.52]}, distanceField: 'km', distanceMultiplier: 0.001}},
  {$limit: 2},
]).toArray();
eq(byDistance.map(x => [x._id, Math.round(x.km)]), [['berlin', 0], ['paris', 878]], '$geoNear');
eq(d.places.find({loc: {$near: {$geometry: {type: 'Point', coordinates: [0, 0]}}}}).explain().queryPlanner.winningPlan.stage, 'GEO_NEAR_2DSPHERE', 'explain');
let code = 0;
try {
  d.places.insertOne({loc: {type: 'Point', coordinates: [200, 0]}});
} catch (e) {
  code = e.code;
}
eq(code, 16755, 'a point out of bounds');
print('ok');
