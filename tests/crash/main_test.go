// Package crash proves Folio's durability promises against a real folio
// process: writes acknowledged with j:true survive SIGKILL, and SIGTERM or
// SIGINT shut the server down cleanly without losing data.
package crash

import (
	"os"
	"testing"

	"github.com/folio-db/folio/tests/folioproc"
)

func TestMain(m *testing.M) {
	os.Exit(folioproc.RunTests(m))
}
