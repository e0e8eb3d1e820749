package commands

import "testing"

// TestSecondaryRules: every command says whether a secondary runs it, and
// every rule names a command.
func TestSecondaryRules(t *testing.T) {
	for name := range handlers {
		if _, ok := secondaryRules[name]; !ok {
			t.Errorf("%s: no rule in secondaryRules", name)
		}
	}
	for name := range secondaryRules {
		if _, ok := handlers[name]; !ok {
			t.Errorf("%s: a rule for no command", name)
		}
	}
}
