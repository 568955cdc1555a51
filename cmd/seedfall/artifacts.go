package main

import (
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/world"
)

// artifactDir is where the schedules, histories and report of a world
// file are kept (engine.ArtifactDir).
func artifactDir(w *world.World) string { return engine.ArtifactDir(w) }
