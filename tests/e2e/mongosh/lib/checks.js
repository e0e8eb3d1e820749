// Checks the mongosh end-to-end scripts share; a script loads them with
// load(__dirname + '/lib/checks.js').

// eq fails the script unless actual and expected are the same Extended JSON.
function eq(actual, expected, msg) {
  const a = EJSON.stringify(actual), e = EJSON.stringify(expected);
  if (a !== e) throw new Error(`${msg}: got ${a}, want ${e}`);
}

// ixscan fails the script unless the find's winning plan scans index (the
// plan's stage name is compared when it scans none).
function ixscan(coll, filter, sort, index) {
  const cmd = {find: coll.getName(), filter: filter};
  if (sort) cmd.sort = sort;
  const plan = coll.getDB().runCommand({explain: cmd, verbosity: 'queryPlanner'}).queryPlanner.winningPlan;
  let s = plan;
  while (s && s.stage !== 'IXSCAN') s = s.inputStage;
  eq(s ? s.indexName : plan.stage, index, `explain ${coll.getName()} ${EJSON.stringify(filter)}`);
}
