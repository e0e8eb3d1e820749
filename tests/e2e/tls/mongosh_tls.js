// mongosh over TLS against a folio started with -tls-mode requireTLS (run
// with --tls --tlsCAFile): commands work.
const res = db.getSiblingDB("admin").runCommand({ping: 1});
if (res.ok !== 1) {
    throw new Error("ping over TLS: " + tojson(res));
}
const coll = db.getSiblingDB("e2e_mongosh_tls").c;
coll.insertOne({over: "tls"});
if (coll.countDocuments({over: "tls"}) !== 1) {
    throw new Error("document written over TLS not found");
}
