package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(listCommandsCmd, untyped("listCommands"), "listCommands")
}

// listCommandsCmd lists the commands Folio answers (the test commands only
// when they are enabled), each once, under its name and not its aliases,
// described as MongoDB's ListCommandsCmd describes a command: help (Folio
// has no help texts), requiresAuth (false for the commands access control
// lets anyone run), secondaryOk (it runs on any member),
// adminOnly, secondaryOverrideOk (a read a read preference may send to a
// secondary), apiVersions and deprecatedApiVersions.
func listCommandsCmd(s *Service, _ *Request) (bson.Raw, error) {
	names := make([]string, 0, len(handlers))
	for n, c := range handlers {
		if s.available(c) && c.names[0] == n {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	cmds := bson.D{}
	for _, n := range names {
		rule := secondaryRules[n]
		d := bson.D{
			{Key: "help", Value: ""},
			{Key: "requiresAuth", Value: !authzRules[n].open},
			{Key: "secondaryOk", Value: rule == always},
			{Key: "adminOnly", Value: handlers[n].admin},
		}
		if rule == optIn {
			d = append(d, bson.E{Key: "secondaryOverrideOk", Value: true})
		}
		d = append(d, bson.E{Key: "apiVersions", Value: versionsIf(apiVersion1[n])},
			bson.E{Key: "deprecatedApiVersions", Value: versionsIf(deprecatedInAPIVersion1[n])})
		cmds = append(cmds, bson.E{Key: n, Value: d})
	}
	return marshal(bson.D{{Key: "commands", Value: cmds}}), nil
}

// versionsIf is the API versions of a command: ["1"] when in is set.
func versionsIf(in bool) bson.A {
	if in {
		return bson.A{"1"}
	}
	return bson.A{}
}
