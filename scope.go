package switchboard

// Scopes an API key can hold (spec "Authentication"). ScopeAll grants every scope
// of a workspace; ScopeOperator is not one of them (see Grants).
const (
	ScopeAll              = "*"
	ScopeAccountRead      = "account:read"
	ScopeMessagesRead     = "messages:read"
	ScopeMessagesWrite    = "messages:write"
	ScopeChatsRead        = "chats:read"
	ScopeChatsWrite       = "chats:write"
	ScopeContactsRead     = "contacts:read"
	ScopeContactsWrite    = "contacts:write"
	ScopeNewslettersRead  = "newsletters:read"
	ScopeNewslettersWrite = "newsletters:write"
	ScopeGroupsRead       = "groups:read"
	ScopeGroupsWrite      = "groups:write"
	ScopeBoardsRead       = "boards:read"
	ScopeBoardsWrite      = "boards:write"
	ScopeAudiencesRead    = "audiences:read"
	ScopeAudiencesWrite   = "audiences:write"
	ScopeCampaignsRead    = "campaigns:read"
	ScopeCampaignsWrite   = "campaigns:write"
	ScopeMusicRead        = "music:read"
	ScopeMusicWrite       = "music:write"
	ScopeWebhooksRead     = "webhooks:read"
	ScopeWebhooksWrite    = "webhooks:write"
	ScopeEnginesRead      = "engines:read"
	ScopeEnginesWrite     = "engines:write"
	ScopeProfileRead      = "profile:read"
	ScopeProfileWrite     = "profile:write"
	ScopeStatusRead       = "status:read"
	ScopeStatusWrite      = "status:write"
	ScopeKeysRead         = "keys:read"
	ScopeKeysWrite        = "keys:write"
	ScopeAdmin            = "admin"
	// ScopeOperator is the right to operate the server (the /monitoring queue
	// dashboard, read-only): it sees every workspace, so only a key created with it
	// explicitly holds it, never "*".
	ScopeOperator = "operator"
)

// KnownScopes lists every scope a key may be created with, besides ScopeAll.
var KnownScopes = []string{
	ScopeAccountRead, ScopeMessagesRead, ScopeMessagesWrite, ScopeChatsRead, ScopeChatsWrite, ScopeContactsRead, ScopeContactsWrite,
	ScopeNewslettersRead, ScopeNewslettersWrite,
	ScopeGroupsRead, ScopeGroupsWrite, ScopeBoardsRead, ScopeBoardsWrite, ScopeAudiencesRead, ScopeAudiencesWrite,
	ScopeCampaignsRead, ScopeCampaignsWrite, ScopeMusicRead, ScopeMusicWrite, ScopeWebhooksRead, ScopeWebhooksWrite,
	ScopeEnginesRead, ScopeEnginesWrite, ScopeProfileRead, ScopeProfileWrite, ScopeStatusRead, ScopeStatusWrite, ScopeKeysRead, ScopeKeysWrite, ScopeAdmin, ScopeOperator,
}

// Grants reports whether a key holding scopes may act with scope: it holds scope,
// or it holds ScopeAll and scope is a workspace's (anything but ScopeOperator).
func Grants(scopes []string, scope string) bool {
	for _, s := range scopes {
		if s == scope || (s == ScopeAll && scope != ScopeOperator) {
			return true
		}
	}
	return false
}

// IsKnownScope reports whether s names a scope keys can hold.
func IsKnownScope(s string) bool {
	if s == ScopeAll {
		return true
	}
	for _, k := range KnownScopes {
		if k == s {
			return true
		}
	}
	return false
}
