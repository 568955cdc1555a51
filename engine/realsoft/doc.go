// Package realsoft holds the tests that run public storage and consensus
// software (bbolt, pebble, badger, etcd's WAL, hashicorp/raft, NATS
// JetStream, tidwall/wal) under seedfall, from the worlds in examples/real.
// They live apart from package engine's tests because building these
// programs for wasip1 takes minutes on a cold cache: a package of their own
// gets its own time limit and runs beside the others.
package realsoft
