// Package guest turns a node's Go main package into the WebAssembly module
// seedfall runs: it builds the package for wasip1 from the package's own
// module (with the sim module and network overlays supplied), merges the
// linker's data segments, and keeps the result in a cache keyed by content.
package guest
