package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// commits reports whether r is a write that commits when it returns (so
// ticks the cluster clock): a write command outside a transaction, an
// aggregate ending in $out or $merge, a commitTransaction. Statements of an
// open transaction commit with it.
func commits(r *Request, name string) bool {
	switch {
	case name == "commitTransaction":
		return true
	case name == "abortTransaction" || !supportsWriteConcern[name] || r.Args.Session.inTxn:
		return false
	case name == "aggregate":
		return hasOutputStage(r.Cmd)
	}
	return true
}

// hasOutputStage reports whether an aggregate's pipeline ends in $out or
// $merge.
func hasOutputStage(cmd bson.Raw) bool {
	p, ok := cmd.Lookup("pipeline").ArrayOK()
	if !ok {
		return false
	}
	vals, err := p.Values()
	if err != nil || len(vals) == 0 {
		return false
	}
	last, ok := vals[len(vals)-1].DocumentOK()
	if !ok {
		return false
	}
	name := Name(last)
	return name == "$out" || name == "$merge"
}

// zeroSignature is the $clusterTime signature of a node without
// authentication keys: a 20-byte zero hash and key id 0.
var zeroSignature = [20]byte{}

// withClusterTime appends $clusterTime and operationTime to a reply, as a
// replica set member does on every reply, errors included; a standalone
// reports neither. operationTime is the time of r's write, or for a
// command that wrote nothing the cluster time when it started.
func (s *Service) withClusterTime(reply bson.Raw, r *Request) bson.Raw {
	if s.ReplSetName == "" {
		return reply
	}
	now := s.Clock.Now()
	op := r.writeTime
	if op == 0 {
		op = r.readTime
	}
	if op == 0 {
		op = now
	}
	out := make([]byte, 0, len(reply)+128)
	out = append(out, reply[:len(reply)-1]...)
	ct, out := bsoncore.AppendDocumentElementStart(out, "$clusterTime")
	out = bsoncore.AppendTimestampElement(out, "clusterTime", now.Secs(), now.Inc())
	sig, out := bsoncore.AppendDocumentElementStart(out, "signature")
	out = bsoncore.AppendBinaryElement(out, "hash", bson.TypeBinaryGeneric, zeroSignature[:])
	out = bsoncore.AppendInt64Element(out, "keyId", 0)
	out, _ = bsoncore.AppendDocumentEnd(out, sig)
	out, _ = bsoncore.AppendDocumentEnd(out, ct)
	out = bsoncore.AppendTimestampElement(out, "operationTime", op.Secs(), op.Inc())
	out, _ = bsoncore.AppendDocumentEnd(out, 0)
	return out
}
