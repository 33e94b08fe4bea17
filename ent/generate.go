// Package ent is the generated data layer; the hand-written schema is in ent/schema
// and entc.go drives the generator (see generate.go at the module root).
package ent
