package engine

// Restrictor is an Engine that can tell when the network restricts its account: a
// ban, a temporary block, a rate limit. Campaigns ask it before each step and
// pause themselves (saying why) while the account is restricted, instead of
// sending into a ban. Engines that cannot tell need not implement it.
type Restrictor interface {
	// Restriction returns why the account is restricted now, and false when it
	// is not.
	Restriction() (reason string, restricted bool)
}
