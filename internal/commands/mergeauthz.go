package commands

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	registerAdmin(mergeAuthzCmd, mergeAuthzSpec, "_mergeAuthzCollections")
	authzRules["_mergeAuthzCollections"] = authzRule{needs: mergeAuthzNeeds}
	supportsWriteConcern["_mergeAuthzCollections"] = true
}

// mergeAuthzSpec declares _mergeAuthzCollections's fields (MongoDB's
// user_management_commands.idl).
var mergeAuthzSpec = &argSpec{path: "_mergeAuthzCollections", fields: []argField{
	arg("tempUsersCollection", tString),
	arg("tempRolesCollection", tString),
	required("db", tString),
	arg("drop", tBool),
}}

// mergeAuthzCmd is the internal command mongorestore restores users and
// roles with: it loads them into temporary collections of admin, then
// has them merged into admin.system.users and admin.system.roles. Those
// of db (every database's when db is empty) are inserted; with drop they
// replace the users and roles of the same names, and the users and roles
// of db the temporary collections do not hold are removed afterwards (so
// that there is never a moment without users). A document that cannot be
// written is skipped, as MongoDB logs it and goes on. An interruption
// (killOp, maxTimeMS, a disconnect) stops the merge between documents:
// what was merged stays.
func mergeAuthzCmd(s *Service, r *Request) (bson.Raw, error) {
	users, roles := r.args.str("tempUsersCollection"), r.args.str("tempRolesCollection")
	if users == "" && roles == "" {
		return nil, mongoerr.New(mongoerr.BadValue, `Must provide at least one of "tempUsersCollection" and "tempRolesCollection"`)
	}
	db, drop := r.args.str("db"), r.args.bool("drop")
	defer s.Access.changed()
	for _, m := range []struct{ temp, coll, nameField string }{{users, usersColl, "user"}, {roles, rolesColl, "role"}} {
		if m.temp == "" {
			continue
		}
		if err := s.mergeAuthzDocs(r.Ctx, m.temp, m.coll, m.nameField, db, drop); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// mergeAuthzDocs merges the documents of the namespace temp into
// admin.coll; their _id is <db>.<name>, name held in nameField. It checks
// ctx before each document it writes or removes.
func (s *Service) mergeAuthzDocs(ctx context.Context, temp, coll, nameField, db string, drop bool) error {
	filter := bson.D{}
	if db != "" {
		filter = bson.D{{Key: "db", Value: db}}
	}
	toDrop := map[string]bool{}
	if drop {
		existing, err := s.findAuthDocs(coll, filter, 0)
		if err != nil {
			return err
		}
		for _, d := range existing {
			toDrop[d.Lookup("_id").StringValue()] = true
		}
	}
	tempDB, tempColl, _ := strings.Cut(temp, ".")
	docs, err := s.findDocs(tempDB, tempColl, filter, 0)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := mongoerr.Interruption(ctx); err != nil {
			return err
		}
		name, _ := d.Lookup(nameField).StringValueOK()
		ownDB, _ := d.Lookup("db").StringValueOK()
		id := ownDB + "." + name
		var doc bson.D
		err := bson.Unmarshal(d, &doc)
		if err == nil {
			err = s.writeAuthDoc(coll, id, doc, !(drop && toDrop[id]))
		}
		if err != nil {
			s.Log.Warn("could not merge an authorization document during _mergeAuthzCollections", "collection", coll, "id", id, "err", err)
		}
		delete(toDrop, id)
	}
	for id := range toDrop {
		if err := mongoerr.Interruption(ctx); err != nil {
			return err
		}
		if _, err := s.deleteAuthDocs(coll, bson.D{{Key: "_id", Value: id}}); err != nil {
			return err
		}
	}
	return nil
}

// mergeAuthzNeeds: creating, granting and revoking users and roles on db
// (any database's when db is empty), dropping them too with drop, and
// reading the temporary collections.
func mergeAuthzNeeds(r *Request) ([]need, error) {
	target := auth.AnyNormalTarget()
	if db := r.args.str("db"); db != "" {
		target = auth.DBTarget(db)
	}
	acts := []string{"createUser", "createRole", "grantRole", "revokeRole"}
	if r.args.bool("drop") {
		acts = append(acts, "dropUser", "dropRole")
	}
	var needs []need
	for _, a := range acts {
		needs = append(needs, need{target, a})
	}
	for _, temp := range []string{r.args.str("tempUsersCollection"), r.args.str("tempRolesCollection")} {
		if db, coll, ok := strings.Cut(temp, "."); ok {
			needs = append(needs, need{auth.NSTarget(db, coll), "find"})
		}
	}
	return needs, nil
}
