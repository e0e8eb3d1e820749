package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// createIndexes' commitQuorum: how many (or which) replica set members must
// be ready before an index build commits. MongoDB parses it
// (CommitQuorumOptions::parse, commit_quorum_options.cpp): a number from 0
// to the replica set's most voting members (7), or a non-empty string (a
// mode: "majority", "votingMembers" or a write concern tag); anything else
// is FailedToParse. A standalone refuses it; a two-phase build (any
// replicated namespace) checks it can be satisfied
// (TopologyCoordinator::checkIfCommitQuorumCanBeSatisfied) and names it in
// the reply, "votingMembers" when none was given (create_indexes_cmd.cpp).

// maxVotingMembers is ReplSetConfig::kMaxVotingMembers.
const maxVotingMembers = 7

// defaultCommitQuorum is the quorum of a two-phase build given none.
const defaultCommitQuorum = "votingMembers"

// tCommitQuorum is the IDL's CommitQuorum, whose deserializer sees every
// value, null included.
var tCommitQuorum = argType{
	mask: numberMask | typeMask(bson.TypeString), want: []string{"number", "string"}, null: nullWrongType,
	mismatch: func(string, bson.RawValue) error {
		return mongoerr.New(mongoerr.FailedToParse, "commitQuorum has to be a number or a string")
	},
	check: func(_, _ string, v bson.RawValue) error {
		if v.Type == bson.TypeString {
			if v.StringValue() == "" {
				return mongoerr.New(mongoerr.FailedToParse, "commitQuorum can't be an empty string")
			}
			return nil
		}
		if n, _ := safeInt64(v); n < 0 || n > maxVotingMembers {
			return mongoerr.New(mongoerr.FailedToParse, "commitQuorum has to be a non-negative number and not greater than %d", maxVotingMembers)
		}
		return nil
	},
}

// commitQuorum is the commitQuorum createIndexes on db.coll names in its
// reply (as MongoDB writes it: the number as an int, or the mode), or the
// nil when the build is not two-phase (a standalone, the local
// database, system.profile); an error when it cannot be used.
func (s *Service) commitQuorum(r *Request, db, coll string) (any, error) {
	twoPhase := s.ReplSetName != "" && db != "local" && coll != "system.profile"
	v := r.args.value("commitQuorum")
	if v.Type == 0 {
		if !twoPhase {
			return nil, nil
		}
		return defaultCommitQuorum, nil
	}
	if s.ReplSetName == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "Standalones can't specify commitQuorum")
	}
	if !twoPhase {
		return nil, mongoerr.New(mongoerr.BadValue, "commitQuorum is supported only for two phase index builds with commit quorum support enabled ")
	}
	if v.Type == bson.TypeString {
		switch mode := v.StringValue(); mode {
		case "majority", defaultCommitQuorum:
			// one member is the majority and every voting member
		default:
			// Folio's replica set configuration has no tags, so no
			// custom mode.
			return nil, unknownWriteMode(mode)
		}
		return v.StringValue(), nil
	}
	// one data-bearing member that builds indexes
	n, _ := safeInt64(v)
	if n > 1 {
		return nil, mongoerr.New(mongoerr.UnsatisfiableCommitQuorum, "Not enough data-bearing nodes to satisfy commit quorum")
	}
	return int32(n), nil
}
