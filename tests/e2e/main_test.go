// Package e2e runs client scripts — mongosh and pymongo — against a real
// folio binary started as a child process, proving that the stock MongoDB
// tools work against Folio end to end.
package e2e

import (
	"os"
	"testing"

	"github.com/folio-db/folio/tests/folioproc"
)

func TestMain(m *testing.M) {
	os.Exit(folioproc.RunTests(m))
}
