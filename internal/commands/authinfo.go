package commands

import (
	"cmp"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(usersInfoCmd, &argSpec{path: "usersInfo", fields: []argField{
		arg("showPrivileges", tAny),
		arg("showCredentials", tBool),
		withDefault("showCustomData", tBool, 1),
		arg("showAuthenticationRestrictions", tBool),
		arg("filter", tDoc),
	}}, "usersInfo")
	register(rolesInfoCmd, &argSpec{path: "rolesInfo", fields: []argField{
		arg("showPrivileges", tAny),
		arg("showBuiltinRoles", tBool),
		arg("showAuthenticationRestrictions", tBool),
	}}, "rolesInfo")
}

// infoQuery is what usersInfo or rolesInfo asks about: every user or role
// of the database (all), of every database (forAllDBs), or named ones.
type infoQuery struct {
	all, forAllDBs bool
	users          []auth.UserName
	roles          []auth.RoleName
}

// parseInfoQuery reads usersInfo's or rolesInfo's first field as
// MongoDB's UMCInfoCommandArg does (auth/umc_info_command_arg.h): a number
// whose safeNumberLong is 1 asks for every user or role of the database;
// for usersInfo, a document whose forAllDBs is true for those of every
// database; otherwise a name, or an array of names, each a string (on the
// command's database) or a document read by MongoDB's one name parser
// (auth.ParseUserNameDoc, auth.ParseRoleNameDoc), whose errors name what
// is wrong ("UserName must contain a field named: db"...).
func parseInfoQuery(r *Request, user bool) (infoQuery, error) {
	var q infoQuery
	add := func(e bson.RawValue) error {
		switch e.Type {
		case bson.TypeString:
			if user {
				q.users = append(q.users, auth.UserName{User: e.StringValue(), DB: r.DB})
			} else {
				q.roles = append(q.roles, auth.RoleName{Role: e.StringValue(), DB: r.DB})
			}
			return nil
		case bson.TypeEmbeddedDocument:
			if user {
				u, err := auth.ParseUserNameDoc(e.Document())
				q.users = append(q.users, u)
				return err
			}
			rn, err := auth.ParseRoleNameDoc(e.Document(), false)
			q.roles = append(q.roles, rn)
			return err
		}
		return auth.NameTypeError(user)
	}
	v := r.args.first()
	if n, ok := safeInt64(v); ok && n == 1 {
		q.all = true
		return q, nil
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		if user && values.Truthy(v.Document().Lookup("forAllDBs")) {
			q.forAllDBs = true
			return q, nil
		}
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		for _, e := range vals {
			if err := add(e); err != nil {
				return q, err
			}
		}
		return q, nil
	}
	return q, add(v)
}

// infoFlags are usersInfo's and rolesInfo's options.
type infoFlags struct {
	showPrivileges, showCredentials, showBuiltinRoles bool
	hideCustomData, showRestrictions                  bool
	// asUserFragment: rolesInfo's showPrivileges: "asUserFragment"
	asUserFragment bool
	filter         bson.Raw
}

func parseInfoFlags(r *Request, cmdName string) (infoFlags, error) {
	var f infoFlags
	c := &r.args
	if v := c.value("showPrivileges"); v.Type != 0 {
		if s, ok := v.StringValueOK(); ok && s == "asUserFragment" && cmdName == "rolesInfo" {
			f.asUserFragment = true
		} else if v.Type != bson.TypeBoolean && !values.IsNumber(v.Type) {
			return f, wrongType(cmdName, "showPrivileges", v, "bool")
		}
		f.showPrivileges = !f.asUserFragment && values.Truthy(v)
	}
	if cmdName == "usersInfo" {
		f.showCredentials, f.filter = c.bool("showCredentials"), c.doc("filter")
		f.hideCustomData, f.showRestrictions = !c.bool("showCustomData"), c.bool("showAuthenticationRestrictions")
	} else {
		f.showBuiltinRoles, f.showRestrictions = c.bool("showBuiltinRoles"), c.bool("showAuthenticationRestrictions")
	}
	return f, nil
}

func usersInfoCmd(s *Service, r *Request) (bson.Raw, error) {
	q, err := parseInfoQuery(r, true)
	if err != nil {
		return nil, err
	}
	f, err := parseInfoFlags(r, "usersInfo")
	if err != nil {
		return nil, err
	}
	exact := !q.all && !q.forAllDBs
	if (f.showPrivileges || f.showRestrictions) && (f.filter != nil || !exact) {
		// MongoDB answers these from its user cache, by name
		return nil, mongoerr.New(mongoerr.IllegalOperation, "Privilege or restriction details require exact-match usersInfo queries")
	}
	var docs []bson.Raw
	switch {
	case q.forAllDBs:
		docs, err = s.findAuthDocs(usersColl, bson.D{}, 0)
	case q.all:
		docs, err = s.findAuthDocs(usersColl, bson.D{{Key: "db", Value: r.DB}}, 0)
	default:
		// the pipeline's $match finds each user once; the cache, asked
		// for privileges, answers each name given
		seen := map[auth.UserName]bool{}
		for _, u := range q.users {
			if seen[u] && !f.showPrivileges && !f.showRestrictions {
				continue
			}
			seen[u] = true
			d, err := s.userDoc(u)
			if err != nil {
				return nil, err
			}
			if d != nil {
				docs = append(docs, d)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if !f.showPrivileges && !f.showRestrictions {
		// MongoDB reads these users with a pipeline: a $match of the names
		// given ($or, so none is its error), then a $sort on user and db
		if exact && len(q.users) == 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "$and/$or/$nor must be a nonempty array")
		}
		slices.SortStableFunc(docs, func(a, b bson.Raw) int {
			return cmp.Or(compareField(a, b, "user"), compareField(a, b, "db"))
		})
	}
	match, err := query.Compile(f.filter)
	if err != nil {
		return nil, err
	}
	out := bson.A{}
	for _, d := range docs {
		u, err := s.describeUser(d, f)
		if err != nil {
			return nil, err
		}
		// the filter applies to the users as usersInfo shows them
		if match.Match(marshal(u)) {
			out = append(out, u)
		}
	}
	return marshal(bson.D{{Key: "users", Value: out}}), nil
}

// compareField compares the string field name of a and b bytewise.
func compareField(a, b bson.Raw, name string) int {
	x, _ := a.Lookup(name).StringValueOK()
	y, _ := b.Lookup(name).StringValueOK()
	return strings.Compare(x, y)
}

// describeUser is a user as usersInfo shows it: its document without
// credentials (unless asked), with its mechanisms, and with
// showPrivileges or showAuthenticationRestrictions its inherited roles and
// privileges.
func (s *Service) describeUser(doc bson.Raw, f infoFlags) (bson.D, error) {
	var name auth.UserName
	name.User, _ = doc.Lookup("user").StringValueOK()
	name.DB, _ = doc.Lookup("db").StringValueOK()
	creds, err := userCredentials(doc)
	if err != nil {
		return nil, err
	}
	out := bson.D{}
	elems, _ := doc.Elements()
	for _, e := range elems {
		if e.Key() == "credentials" && !f.showCredentials || e.Key() == "customData" && f.hideCustomData {
			continue
		}
		out = append(out, bson.E{Key: e.Key(), Value: e.Value()})
	}
	mechs := creds.Mechanisms()
	if name.DB == auth.ExternalDB {
		mechs = []string{"external"}
	}
	out = append(out, bson.E{Key: "mechanisms", Value: mechs})
	if f.showRestrictions {
		// createUser refuses restrictions: every user has none.
		out = append(out, bson.E{Key: "authenticationRestrictions", Value: bson.A{}})
	}
	if f.showPrivileges || f.showRestrictions {
		// MongoDB answers either from the user's full description
		// (getUserDescription, User::reportForUsersInfo), which holds
		// its inherited roles, privileges and restrictions
		roles, privs, err := auth.Resolve(directRoles(doc, name.DB), s.roleDef)
		if err != nil {
			return nil, err
		}
		out = append(out,
			bson.E{Key: "inheritedRoles", Value: auth.RoleDocs(roles)},
			bson.E{Key: "inheritedPrivileges", Value: auth.PrivilegeDocs(privs)},
			bson.E{Key: "inheritedAuthenticationRestrictions", Value: bson.A{}},
		)
	}
	return out, nil
}

func rolesInfoCmd(s *Service, r *Request) (bson.Raw, error) {
	q, err := parseInfoQuery(r, false)
	if err != nil {
		return nil, err
	}
	f, err := parseInfoFlags(r, "rolesInfo")
	if err != nil {
		return nil, err
	}
	if f.asUserFragment {
		if q.all {
			return nil, mongoerr.New(mongoerr.IllegalOperation, "Cannot get user fragment for all roles in a database")
		}
		return s.rolesAsUserFragment(q.roles, f.showRestrictions)
	}
	var defs []auth.RoleDef
	builtin := map[auth.RoleName]bool{}
	if q.all {
		if f.showBuiltinRoles {
			for _, n := range auth.BuiltinNames(r.DB) {
				rn := auth.RoleName{Role: n, DB: r.DB}
				defs = append(defs, auth.RoleDef{Name: rn})
				builtin[rn] = true
			}
		}
		docs, err := s.findAuthDocs(rolesColl, bson.D{{Key: "db", Value: r.DB}}, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			def, err := auth.ParseRoleDef(d)
			if err != nil {
				return nil, err
			}
			defs = append(defs, def)
		}
	} else {
		for _, rn := range q.roles {
			if auth.IsBuiltin(rn) {
				defs = append(defs, auth.RoleDef{Name: rn})
				builtin[rn] = true
				continue
			}
			def, found, err := s.roleDef(rn)
			if err != nil {
				return nil, err
			}
			if found {
				defs = append(defs, def)
			}
		}
	}
	out := bson.A{}
	for _, def := range defs {
		d, err := s.describeRole(def, builtin[def.Name], q.all, f)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return marshal(bson.D{{Key: "roles", Value: out}}), nil
}

// rolesAsUserFragment is rolesInfo's answer with showPrivileges:
// "asUserFragment", as MongoDB's getRolesAsUserFragment builds it: the
// roles as a user holding them would be shown, {userFragment: {roles,
// inheritedRoles (the roles and those they inherit), inheritedPrivileges}}.
func (s *Service) rolesAsUserFragment(roles []auth.RoleName, showRestrictions bool) (bson.Raw, error) {
	all, privs, err := auth.Resolve(roles, s.roleDef)
	if err != nil {
		return nil, err
	}
	for _, r := range roles {
		if !slices.Contains(all, r) {
			all = append(all, r)
		}
	}
	fragment := bson.D{
		{Key: "roles", Value: auth.RoleDocs(roles)},
		{Key: "inheritedRoles", Value: auth.RoleDocs(all)},
		{Key: "inheritedPrivileges", Value: auth.PrivilegeDocs(privs)},
	}
	if showRestrictions {
		// roles hold no restrictions in Folio (createRole refuses them)
		fragment = append(fragment, bson.E{Key: "inheritedAuthenticationRestrictions", Value: bson.A{}})
	}
	return marshal(bson.D{{Key: "userFragment", Value: fragment}}), nil
}

// describeRole is a role as rolesInfo shows it, in MongoDB's shapes: by
// name (getRolesDescription) or, forDB, among all of a database's roles
// (getRoleDescriptionsForDB). A built-in role shows roles and
// inheritedRoles empty and the same privileges twice; a user-defined one
// its stored fields, then its inherited roles (its roles and theirs) and
// inherited privileges (its own as stored, then those of its roles,
// merged: serializeResolvedRoles). With showAuthenticationRestrictions
// its own and inherited restrictions, none in Folio (createRole refuses
// them): empty arrays.
func (s *Service) describeRole(def auth.RoleDef, builtin, forDB bool, f infoFlags) (bson.D, error) {
	showPrivileges := f.showPrivileges
	var inheritedRoles []auth.RoleName
	var own, inheritedPrivs bson.A
	if builtin {
		_, privs, err := auth.Resolve([]auth.RoleName{def.Name}, s.roleDef)
		if err != nil {
			return nil, err
		}
		own = auth.PrivilegeDocs(privs)
		inheritedPrivs = own
	} else {
		all, privs, err := auth.Resolve(def.Roles, s.roleDef)
		if err != nil {
			return nil, err
		}
		inheritedRoles = slices.Clone(def.Roles)
		for _, r := range all {
			if !slices.Contains(inheritedRoles, r) {
				inheritedRoles = append(inheritedRoles, r)
			}
		}
		own = auth.PrivilegeDocs(def.Privileges)
		inheritedPrivs = append(slices.Clone(own), auth.PrivilegeDocs(privs)...)
	}
	isBuiltin := bson.E{Key: "isBuiltin", Value: builtin}
	restrictions := bson.E{Key: "authenticationRestrictions", Value: bson.A{}}
	inherited := bson.D{{Key: "inheritedRoles", Value: auth.RoleDocs(inheritedRoles)}}
	if showPrivileges {
		inherited = append(inherited, bson.E{Key: "inheritedPrivileges", Value: inheritedPrivs})
	}
	if f.showRestrictions {
		inherited = append(inherited, bson.E{Key: "inheritedAuthenticationRestrictions", Value: bson.A{}})
	}
	var d bson.D
	switch {
	case builtin && forDB:
		d = bson.D{{Key: "role", Value: def.Name.Role}, {Key: "db", Value: def.Name.DB}, isBuiltin,
			{Key: "roles", Value: bson.A{}}, {Key: "inheritedRoles", Value: bson.A{}}}
		if showPrivileges {
			d = append(d, bson.E{Key: "privileges", Value: own}, bson.E{Key: "inheritedPrivileges", Value: inheritedPrivs})
		}
		if f.showRestrictions {
			d = append(d, restrictions, bson.E{Key: "inheritedAuthenticationRestrictions", Value: bson.A{}})
		}
		return d, nil
	case builtin:
		d = bson.D{{Key: "db", Value: def.Name.DB}, {Key: "role", Value: def.Name.Role}, {Key: "roles", Value: bson.A{}}}
		if showPrivileges {
			d = append(d, bson.E{Key: "privileges", Value: own})
		}
	default:
		d = bson.D{{Key: "_id", Value: def.Name.ID()}, {Key: "role", Value: def.Name.Role}, {Key: "db", Value: def.Name.DB}}
		if showPrivileges {
			d = append(d, bson.E{Key: "privileges", Value: own})
		}
		d = append(d, bson.E{Key: "roles", Value: auth.RoleDocs(def.Roles)})
	}
	if f.showRestrictions {
		d = append(d, restrictions)
	}
	if forDB {
		d = append(d, isBuiltin)
		return append(d, inherited...), nil
	}
	return append(append(d, inherited...), isBuiltin), nil
}

// connectionStatus is connectionStatus's authInfo: the connection's
// authenticated user, its roles and those they inherit (MongoDB's
// authenticated role names, built from User::getIndirectRoles), and with
// showPrivileges what they grant.
func (s *Service) connectionStatus(r *Request, showPrivileges bool) (bson.D, error) {
	users, roles, privs := bson.A{}, bson.A{}, bson.A{}
	u, err := s.privileges(r.Conn)
	if err != nil {
		return nil, err
	}
	if u != nil {
		users = append(users, u.name.Doc())
		roles = auth.RoleDocs(u.roles)
		privs = auth.PrivilegeDocs(u.privs)
	}
	d := bson.D{
		{Key: "authenticatedUsers", Value: users},
		{Key: "authenticatedUserRoles", Value: roles},
	}
	if showPrivileges {
		d = append(d, bson.E{Key: "authenticatedUserPrivileges", Value: privs})
	}
	return d, nil
}
