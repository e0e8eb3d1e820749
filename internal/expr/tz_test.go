package expr

import (
	"os"
	"testing"
	"time"
)

// TestMain runs the tests in UTC: a timestamp coerced to a string shows the
// server's local time, as in MongoDB, and the corpus gives UTC's.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}
