package switchboard

// Scopes an API key can hold (spec "Authentication"). ScopeAll grants every scope.
const (
	ScopeAll            = "*"
	ScopeAccountRead    = "account:read"
	ScopeMessagesRead   = "messages:read"
	ScopeMessagesWrite  = "messages:write"
	ScopeChatsRead      = "chats:read"
	ScopeGroupsRead     = "groups:read"
	ScopeGroupsWrite    = "groups:write"
	ScopeBoardsWrite    = "boards:write"
	ScopeAudiencesWrite = "audiences:write"
	ScopeCampaignsWrite = "campaigns:write"
	ScopeMusicWrite     = "music:write"
	ScopeWebhooksRead   = "webhooks:read"
	ScopeWebhooksWrite  = "webhooks:write"
	ScopeAdmin          = "admin"
)

// KnownScopes lists every scope a key may be created with, besides ScopeAll.
var KnownScopes = []string{
	ScopeAccountRead, ScopeMessagesRead, ScopeMessagesWrite, ScopeChatsRead,
	ScopeGroupsRead, ScopeGroupsWrite, ScopeBoardsWrite, ScopeAudiencesWrite,
	ScopeCampaignsWrite, ScopeMusicWrite, ScopeWebhooksRead, ScopeWebhooksWrite, ScopeAdmin,
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
