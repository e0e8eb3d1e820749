package commands

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// setUserWriteBlockMode (MongoDB 6.0+) blocks and unblocks user writes
// (engine/writeblock.go), as mongosync does while it syncs a cluster.
// https://www.mongodb.com/docs/v7.0/reference/command/setUserWriteBlockMode/
func init() {
	registerAdmin(setUserWriteBlockModeCmd, &argSpec{path: "setUserWriteBlockMode", fields: []argField{
		required("global", tStrictBool),
	}}, "setUserWriteBlockMode")
	authzRules["setUserWriteBlockMode"] = onCluster("setUserWriteBlockMode")
}

func setUserWriteBlockModeCmd(s *Service, r *Request) (bson.Raw, error) {
	if !s.Engine.SoleWriter() {
		return nil, mongoerr.New(mongoerr.NotImplemented, "setUserWriteBlockMode is not supported on a store other Folio servers write too")
	}
	if err := s.Engine.SetUserWritesBlocked(r.args.bool("global")); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// catalogWrites are the commands that change the catalog of the database
// they run on (renameCollection: of the databases it names): while user
// writes are blocked they fail with UserWritesBlocked, as MongoDB's op
// observer fails the catalog change.
var catalogWrites = map[string]bool{
	"create": true, "drop": true, "dropDatabase": true, "createIndexes": true, "dropIndexes": true,
	"deleteIndexes": true, "collMod": true, "convertToCapped": true, "cloneCollectionAsCapped": true,
	"renameCollection": true,
}

// bypassWriteBlock marks r's context exempt from the user write block when
// its user holds bypassWriteBlockingMode on the cluster (under access
// control; without it no client is exempt, as in MongoDB), whether or not
// the block holds yet, as MongoDB sets an operation's bypass when it
// starts; and it fails a catalog change while the block holds.
func (s *Service) bypassWriteBlock(r *Request, name string) error {
	if s.Access.Enabled {
		if u, err := s.privileges(r.Conn); err == nil && u != nil && u.privs.Allows(auth.ClusterTarget(), "bypassWriteBlockingMode") {
			r.Ctx = engine.BypassWriteBlock(r.Ctx)
			return nil
		}
	}
	if !catalogWrites[name] {
		return nil
	}
	dbs := []string{r.DB}
	if name == "renameCollection" {
		from, _ := r.args.first().StringValueOK()
		to, _ := r.args.value("to").StringValueOK()
		fromDB, _, _ := strings.Cut(from, ".")
		toDB, _, _ := strings.Cut(to, ".")
		dbs = []string{fromDB, toDB}
	}
	for _, db := range dbs {
		if err := s.Engine.CheckUserWrite(r.Ctx, db, ""); err != nil {
			return err
		}
	}
	return nil
}
