package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(listCommandsCmd, untyped("listCommands"), "listCommands")
}

// listCommandsCmd lists the commands Folio answers, by name: the test
// commands only when they are enabled.
func listCommandsCmd(s *Service, _ *Request) (bson.Raw, error) {
	names := make([]string, 0, len(handlers))
	for n, c := range handlers {
		if s.available(c) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	cmds := bson.D{}
	for _, n := range names {
		cmds = append(cmds, bson.E{Key: n, Value: bson.D{{Key: "help", Value: ""}}})
	}
	return marshal(bson.D{{Key: "commands", Value: cmds}}), nil
}
