// Package stdlib holds the .star modules shipped with seedfall, which
// scripts load as load("@seedfall/NAME.star", ...).
package stdlib

import "embed"

// FS holds every shipped module, by file name.
//
//go:embed *.star
var FS embed.FS
