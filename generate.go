package switchboard

// Generation order matters: ent (and the entgql schema) first, then gqlgen.
//go:generate go -C ent run -mod=mod entc.go
//go:generate go run -mod=mod github.com/99designs/gqlgen generate
