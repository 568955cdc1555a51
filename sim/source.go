//go:build !wasip1

package sim

import (
	"embed"
	"io/fs"
)

// The seedfall binary carries this module's source so that it can build
// guests that import sim without the user adding a replace directive. Guests
// (wasip1) never link it.
//
//go:embed *.go go.mod
var source embed.FS

// Source returns the files of this module (its .go files and go.mod) as a
// flat file system. Test files are included; callers that copy the module
// for a build may skip them.
func Source() fs.FS { return source }
