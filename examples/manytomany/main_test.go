package main

import (
	"testing"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func TestExample(t *testing.T) { cookbook.Test(t, "manytomany", run) }
