package rest

import (
	"net/http"

	"github.com/switchboardhq/switchboard/graph"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/view"
)

// The route table: every /v1 operation declared once, with its method, path,
// the GraphQL root field it serves, handler and OpenAPI entry. A route's scope is
// its root field's, declared once by the field's @scope in the schema (needs);
// NewRouter serves the table (each route behind its scope) and buildOpenAPI
// documents it.

// apiOp is one documented operation.
type apiOp struct {
	method, path, id, tag, summary string
	// field is the GraphQL root field (a Query or Mutation field) the operation
	// serves: the route needs the scope the field's @scope declares.
	field string
	// scope is the scope of an operation that serves no root field (none does
	// today but the public ones); "" asks only for a valid key.
	scope string
	// handle is the operation's handler on the server (nil for the routes the
	// router serves outside /v1's authenticated group, such as this document).
	handle func(*server) http.Handler
	query  []apiParam
	// body is the request body schema; nil when the operation reads none.
	body map[string]any
	// bodyOptional marks a body that may be empty.
	bodyOptional bool
	// status is the success status; 0 is 200.
	status int
	// data is the schema of the envelope's data (of its items when list); nil
	// answers an empty body (204).
	data map[string]any
	list bool
	// form is the schema of a multipart/form-data body the operation also takes.
	form map[string]any
	// header names request headers the operation reads.
	header []apiParam
	// alt are the other media types of the success answer, with their schemas.
	alt map[string]any
	// public marks an operation open without an API key, answering a bare JSON
	// document rather than the envelope.
	public bool
	// errs are the error statuses beyond those every operation can answer.
	errs []int
}

// needs returns the scope the operation needs: its root field's ("" for any
// valid key). It panics for a field the schema does not have, so that a route
// table naming one cannot be served.
func (o apiOp) needs() string {
	if o.field == "" {
		return o.scope
	}
	scope, ok := graph.RootScope(o.field)
	if !ok {
		panic("rest: " + o.method + " " + o.path + " serves " + o.field + ", which is no root field of the GraphQL schema")
	}
	return scope
}

// on is the handle of an operation served by a handler method of server.
func on(method func(*server, http.ResponseWriter, *http.Request) error) func(*server) http.Handler {
	return func(s *server) http.Handler {
		return handlerFunc(func(w http.ResponseWriter, r *http.Request) error { return method(s, w, r) })
	}
}

const (
	tagAccount    = "Account"
	tagMessages   = "Messages"
	tagScheduled  = "Scheduled messages"
	tagChats      = "Chats"
	tagContacts   = "Contacts"
	tagGroups     = "Groups"
	tagNewsletter = "Newsletters"
	tagWebhooks   = "Webhooks"
	tagBoards     = "Boards"
	tagAudiences  = "Audiences"
	tagCampaigns  = "Campaigns"
	tagMusic      = "Music"
	tagEngines    = "Engines"
	tagSandbox    = "Sandbox"
	tagProfile    = "Profile"
	tagStatus     = "Status"
)

// Error statuses: engine-backed operations can find no engine (503) or time out (504).
var (
	eng    = []int{404, 409, 503, 504}
	notFnd = []int{404}
	// engNS: an engine-backed operation of an optional capability (501 not_supported).
	engNS       = []int{404, 409, 501, 503, 504}
	engineParam = q("engineId", "The engine (number) to act through; the workspace's default engine without it.", str)
)

// apiOperations is every /v1 operation, in the router's order.
var apiOperations = []apiOp{
	{method: "GET", path: "/v1/openapi.json", id: "getOpenAPI", tag: "Reference", summary: "This OpenAPI document", public: true},
	{method: "GET", path: "/v1/engines/protocol.json", id: "getEngineProtocol", tag: "Reference", summary: "The engine protocol's JSON Schema (docs/engine-protocol.md)", public: true},
	{method: "GET", path: "/v1/ping", handle: on((*server).ping), id: "ping", field: "ping", tag: tagAccount, summary: "Check the API key and list the workspace's WhatsApp connections", data: ref("Ping")},
	{method: "GET", path: "/v1/account", handle: on((*server).account), id: "getAccount", tag: tagAccount, summary: "The workspace the API key belongs to", field: "account", data: ref("Account")},

	{method: "GET", path: "/v1/scheduled-messages", handle: on((*server).listScheduledMessages), id: "listScheduledMessages", tag: tagScheduled, summary: "List queued and scheduled messages", field: "scheduledMessages",
		query: page(q("chatId", "Only messages to this chat.", str), q("searchToken", "Text a message holds.", str), q("status", "Only messages in this status.", str), q("order", "Sort order.", str), q("engineId", "Only messages of this engine (number).", str)), data: ref("Message"), list: true},
	{method: "POST", path: "/v1/scheduled-messages/{chatId}", handle: on((*server).scheduleMessage), id: "scheduleMessage", tag: tagScheduled, summary: "Queue a message to a chat, now or at sendAt", field: "scheduleMessage",
		body: scheduledSchema(bodyOf(messageBody{})), form: scheduledSchema(messageForm), header: []apiParam{q("Idempotency-Key", "Makes a retried request answer the message first queued (200) instead of queueing another.", typ("string", "maxLength", 64))}, status: 201, data: ref("Message"), errs: []int{409}},
	{method: "GET", path: "/v1/scheduled-messages/{id}", handle: on((*server).getScheduledMessage), id: "getScheduledMessage", tag: tagScheduled, summary: "One queued or scheduled message", field: "scheduledMessage", data: ref("Message"), errs: notFnd},
	{method: "PATCH", path: "/v1/scheduled-messages/{id}", handle: on((*server).updateScheduledMessage), id: "updateScheduledMessage", tag: tagScheduled, summary: "Change a message that has not been sent yet", field: "updateScheduledMessage",
		body: bodyOf(messageBody{}), form: messageForm, data: ref("Message"), errs: []int{404, 409}},
	{method: "DELETE", path: "/v1/scheduled-messages/{id}", handle: on((*server).cancelScheduledMessage), id: "cancelScheduledMessage", tag: tagScheduled, summary: "Cancel a message that has not been sent yet", field: "cancelScheduledMessage",
		data: rec("Deleted", model.DeletePayload{}), errs: []int{404, 409}},

	{method: "POST", path: "/v1/messages/{chatId}", handle: on((*server).sendMessage), id: "sendMessage", tag: tagMessages, summary: "Send a message to a chat through an engine and wait for its key", field: "sendMessage",
		body: directSchema(bodyOf(directBody{})), form: directSchema(messageForm), status: 201, data: ref("Message"), errs: eng},
	{method: "GET", path: "/v1/messages", handle: on((*server).listStoredMessages), id: "listStoredMessages", tag: tagMessages, summary: "Search the message store", field: "storedMessages",
		query: page(q("chatId", "Only messages of this chat.", str), q("searchToken", "Text a message holds.", str), q("queryAny", "Words any of which a message holds.", str), q("order", "Sort order.", str), q("since", "Only messages at or after this time.", str), q("until", "Only messages before this time.", str), q("messageTypes", "Only these message types (repeated or comma-separated).", str), q("mime", "Only attachments of this MIME type.", str), q("filenameContains", "Only attachments whose file name holds this.", str), q("hasMedia", "Only messages with (true) or without (false) an attachment.", boolean), q("sender", "Only messages from this sender.", str), q("engineId", "Only messages of this engine (number).", str), q("loadFromPhoneIfNeeded", "Accepted for compatibility; ignored.", boolean), q("includeMediaContent", "Accepted for compatibility; ignored.", boolean)), data: ref("ChatMessage"), list: true},
	{method: "GET", path: "/v1/messages/ack/{waMessageKey}", handle: on((*server).getMessageAck), id: "getMessageAck", tag: tagMessages, summary: "The delivery acknowledgement level of a message", field: "messageAck", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)},
		data: obj([]string{"ack"}, map[string]any{"ack": integer}), errs: eng},
	{method: "POST", path: "/v1/messages/acks", handle: on((*server).getMessageAcks), id: "getMessageAcks", tag: tagMessages, summary: "The acknowledgement levels of several messages", field: "messageAcks",
		body: closed([]string{"messageKeys"}, map[string]any{"messageKeys": arrayOf(str), "chatId": str}), data: rec("MessageAck", model.MessageAck{}), list: true, errs: eng},
	{method: "POST", path: "/v1/messages/load_older/{chatId}", handle: on((*server).loadOlder), id: "loadOlderMessages", tag: tagMessages, summary: "Fetch older history of a chat from the phone into the store", field: "loadOlderMessages",
		body: closed(nil, map[string]any{"pages": typ("integer", "minimum", 1, "maximum", 10), "until_date": typ("string", "description", "Stop at messages older than this date.")}), bodyOptional: true, data: rec("LoadOlderResult", model.LoadOlderResult{}), errs: eng},
	{method: "GET", path: "/v1/messages/media/{waMessageKey}", handle: on((*server).getMessageMedia), id: "getMessageMedia", tag: tagMessages, summary: "Download the attachment of a message", field: "messageMedia",
		query: []apiParam{q("chatId", "The chat of the message, when the key is only its id (a phone number or chat id).", str), q("maxAttempts", "How many download attempts to make while the engine is still fetching, 1.5 s apart (1 answers at once).", typ("integer", "minimum", 1, "maximum", 10, "default", 6))},
		data:  rec("MessageMedia", mediaRecord{}), errs: eng},
	{method: "POST", path: "/v1/messages/reactions/{waMessageKey}", handle: on((*server).reactToMessage), id: "reactToMessage", tag: tagMessages, summary: "React to a message with an emoji (empty removes the reaction)", field: "reactToMessage", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)},
		body: closed([]string{"emoji"}, map[string]any{"emoji": typ("string", "description", "The emoji; empty removes the reaction.")}), data: okData, errs: eng},
	{method: "POST", path: "/v1/messages/pin/{waMessageKey}", handle: on((*server).pinMessage), id: "pinMessage", tag: tagMessages, summary: "Pin a message in its chat", field: "pinMessage", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)},
		body: closed(nil, map[string]any{"duration": typ("integer", "description", "How long to pin, in seconds.")}), bodyOptional: true, data: okData, errs: eng},
	{method: "POST", path: "/v1/messages/unpin/{waMessageKey}", handle: on((*server).unpinMessage), id: "unpinMessage", tag: tagMessages, summary: "Unpin a message", field: "unpinMessage", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)}, data: okData, errs: eng},
	{method: "POST", path: "/v1/messages/edit/{waMessageKey}", handle: on((*server).editMessage), id: "editMessage", tag: tagMessages, summary: "Edit the text (or caption) of a message the account sent, within 15 minutes of sending", field: "editMessage", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)},
		body: closed([]string{"text"}, map[string]any{"text": typ("string", "minLength", 1, "maxLength", 4096, "description", "The new text, or the new caption of a media message.")}), data: ref("ChatMessage"), errs: []int{404, 409, 422, 503, 504}},
	{method: "POST", path: "/v1/messages/revoke/{waMessageKey}", handle: on((*server).revokeMessage), id: "revokeMessage", tag: tagMessages, summary: "Delete a message for everyone (the account's own, or a participant's in a group the account is an admin of)", field: "revokeMessage", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)},
		data: ref("ChatMessage"), errs: eng},
	{method: "POST", path: "/v1/messages/forward/{waMessageKey}", handle: on((*server).forwardMessage), id: "forwardMessage", tag: tagMessages, summary: "Forward a stored message to another chat: a new message, sent at once and shown as forwarded", field: "forwardMessage", query: []apiParam{q("chatId", "The chat of the forwarded message, when the key alone does not name it.", str)},
		body: closed([]string{"chatId"}, map[string]any{"chatId": typ("string", "description", "The chat to forward to (a chat id or an E.164 phone number)."), "engineId": typ("string", "description", "The engine (number) to send through.")}), status: 201, data: ref("Message"), errs: []int{404, 409, 422, 503, 504}},
	{method: "GET", path: "/v1/messages/pinned/{chatId}", handle: on((*server).listPinnedMessages), id: "listPinnedMessages", tag: tagMessages, summary: "The pinned messages of a chat", field: "pinnedMessages",
		data: rec("PinnedMessage", pinnedMessage{}), list: true, errs: notFnd},

	{method: "GET", path: "/v1/latest-chats", handle: on((*server).latestChats), id: "latestChats", tag: tagChats, summary: "The most recent chats with their latest messages", field: "latestChats",
		query: []apiParam{
			q("numberOfChats", "How many chats.", typ("integer", "minimum", 1, "maximum", 200)),
			q("numberOfMessages", "How many messages per chat.", typ("integer", "minimum", 0, "maximum", 100)),
		}, data: obj([]string{"chats", "totalChats", "numberOfChats", "numberOfMessages"}, map[string]any{"totalChats": integer, "numberOfChats": integer, "numberOfMessages": integer, "chats": arrayOf(ref("Chat"))})},
	{method: "GET", path: "/v1/chats", handle: on((*server).listChats), id: "listChats", tag: tagChats, summary: "List chats", field: "chatList",
		query: page(q("searchToken", "Text a chat's name holds.", str), q("filter", "A named subset of chats (such as unread).", str), q("kinds", "Only chats of these kinds (repeated or comma-separated).", str), q("since", "Only chats active at or after this time.", str), q("includeWithoutName", "Include chats without a name.", boolean), q("includeArchive", "Include archived chats.", boolean), q("includeLastMessage", "Add the last message's text and side (lastMessageText, lastMessageFromMe); left out by default.", boolean), q("includeExtendedInfo", "Accepted for compatibility; ignored.", boolean), q("engineId", "Only chats whose latest message went through this engine (number).", str)),
		data:  ref("Chat"), list: true},
	{method: "GET", path: "/v1/chats/{id}", handle: on((*server).getChat), id: "getChat", tag: tagChats, summary: "One chat", field: "chat", data: ref("Chat"), errs: notFnd},
	{method: "GET", path: "/v1/chats/{chatId}/participants", handle: on((*server).listParticipants), id: "listParticipants", tag: tagChats, summary: "The participants of a group chat", field: "chatParticipants",
		query: []apiParam{pageParams[1], q("limit", "How many participants to return.", typ("integer", "minimum", 1, "maximum", 500)), q("searchToken", "Text a participant's name or number holds.", str)},
		data:  dataOf(model.Participant{}), list: true, errs: eng},
	{method: "POST", path: "/v1/chats/{chatId}/mark_read", handle: on((*server).markChatRead), id: "markChatRead", tag: tagChats, summary: "Mark a chat read", field: "markChatRead", data: okData, errs: eng},
	{method: "POST", path: "/v1/chats/{chatId}/presence", handle: on((*server).setChatPresence), id: "setChatPresence", tag: tagChats, summary: "Show the account typing, recording or neither (paused) in a chat", field: "setChatPresence",
		body: closed([]string{"state"}, map[string]any{"state": typ("string", "enum", []string{"typing", "recording", "paused"})}), data: okData, errs: []int{422, 503, 504}},
	{method: "POST", path: "/v1/chats/{chatId}/archive", handle: func(s *server) http.Handler { return s.archiveChat(true) }, id: "archiveChat", tag: tagChats, summary: "Archive a chat", field: "archiveChat", data: okData, errs: eng},
	{method: "POST", path: "/v1/chats/{chatId}/unarchive", handle: func(s *server) http.Handler { return s.archiveChat(false) }, id: "unarchiveChat", tag: tagChats, summary: "Move a chat out of the archive", field: "archiveChat", data: okData, errs: eng},
	{method: "GET", path: "/v1/chats/{chatId}/disappearing", handle: on((*server).getDisappearingTimer), id: "getDisappearingTimer", tag: tagChats, summary: "A chat's disappearing-messages timer (seconds; 0 is off)", field: "disappearingTimer",
		query: []apiParam{engineParam}, data: rec("DisappearingTimer", model.DisappearingTimer{}), errs: engNS},
	{method: "PUT", path: "/v1/chats/{chatId}/disappearing", handle: on((*server).setDisappearingTimer), id: "setDisappearingTimer", tag: tagChats, summary: "Set a chat's disappearing-messages timer: 0 (off), 86400, 604800 or 7776000 seconds", field: "setDisappearingTimer",
		query: []apiParam{engineParam}, body: closed([]string{"seconds"}, map[string]any{"seconds": typ("integer", "enum", []int{0, 86400, 604800, 7776000})}), data: rec("DisappearingTimer", model.DisappearingTimer{}), errs: engNS},

	{method: "GET", path: "/v1/contacts", handle: on((*server).listContacts), id: "listContacts", tag: tagContacts, summary: "List contacts", field: "contactList",
		query: []apiParam{q("limit", "How many contacts to return (default 10); -1 returns every contact in one answer.", map[string]any{"type": "integer", "default": 10, "oneOf": []any{typ("integer", "const", -1), typ("integer", "minimum", 1, "maximum", 200)}}), pageParams[1], q("searchToken", "Text a contact's name or number holds.", str), q("engineId", "Only contacts this engine (number) last reported.", str), q("includeArchive", "Accepted for compatibility; ignored.", boolean)}, data: rec("Contact", contactRecord{}), list: true},
	{method: "POST", path: "/v1/contacts/check", handle: on((*server).checkNumbers), id: "checkNumbers", tag: tagContacts, summary: "Whether phone numbers are on WhatsApp (1-100 a call; cached an hour, paced)", field: "checkNumbers",
		body: closed([]string{"phones"}, map[string]any{"phones": arrayOf(str), "engineId": str}), data: rec("NumberCheckResult", model.NumberCheckResult{}), errs: engNS},
	{method: "GET", path: "/v1/contacts/blocked", handle: on((*server).blockedContacts), id: "listBlockedContacts", tag: tagContacts, summary: "The contacts the account has blocked", field: "blockedContacts",
		query: []apiParam{engineParam}, data: rec("BlockedContacts", model.BlockedContacts{}), errs: engNS},
	{method: "POST", path: "/v1/contacts/{id}/block", handle: func(s *server) http.Handler { return s.setBlocked(true) }, id: "blockContact", tag: tagContacts, summary: "Block a contact", field: "blockContact",
		query: []apiParam{engineParam}, data: rec("BlockedContacts", model.BlockedContacts{}), errs: engNS},
	{method: "DELETE", path: "/v1/contacts/{id}/block", handle: func(s *server) http.Handler { return s.setBlocked(false) }, id: "unblockContact", tag: tagContacts, summary: "Unblock a contact", field: "unblockContact",
		query: []apiParam{engineParam}, data: rec("BlockedContacts", model.BlockedContacts{}), errs: engNS},
	{method: "GET", path: "/v1/contacts/{id}", handle: on((*server).getContact), id: "getContact", tag: tagContacts, summary: "One contact, by its chat id or its LID", field: "contact",
		data: rec("Contact", contactRecord{}), errs: notFnd},
	{method: "GET", path: "/v1/contacts/{id}/details", handle: on((*server).getContactDetails), id: "getContactDetails", tag: tagContacts, summary: "A contact's details from the network: push name, about text, business profile, profile picture", field: "contactDetails",
		query: []apiParam{q("engineId", "The engine (number) to read them through; default: the workspace's default engine.", str), q("refresh", "Ask the network even when the stored details are fresh (younger than 24 hours).", boolean)}, data: rec("ContactDetails", model.ContactDetails{}), errs: []int{400, 404, 501, 503, 504}},
	{method: "GET", path: "/v1/contacts/{id}/common_groups", handle: on((*server).commonGroups), id: "listCommonGroups", tag: tagContacts, summary: "The groups shared with a contact", field: "commonGroups",
		query: pageParams, data: rec("GroupSummary", groupItem{}), list: true, errs: eng},

	{method: "GET", path: "/v1/groups", handle: on((*server).listGroups), id: "listGroups", tag: tagGroups, summary: "List groups", field: "groupList", query: page(q("searchToken", "Text a group's name holds.", str), q("includeArchive", "Include archived groups.", boolean)), data: rec("GroupSummary", groupItem{}), list: true},
	{method: "POST", path: "/v1/groups", handle: on((*server).createGroup), id: "createGroup", tag: tagGroups, summary: "Create a group", field: "createGroup",
		body: closed([]string{"name", "participants"}, map[string]any{"name": str, "participants": arrayOf(str)}), data: rec("Group", groupRecord{}), errs: eng},
	{method: "GET", path: "/v1/groups/{id}", handle: on((*server).getGroup), id: "getGroup", tag: tagGroups, summary: "One group", field: "group", query: []apiParam{q("include", "Extra parts of the group to include.", str)}, data: rec("Group", groupRecord{}), errs: eng},
	{method: "PATCH", path: "/v1/groups/{id}", handle: on((*server).updateGroup), id: "updateGroup", tag: tagGroups, summary: "Rename a group or change its description or settings", field: "updateGroup", body: closed(nil, map[string]any{"name": str, "settings": closed(nil, map[string]any{"announce": boolean, "restrict": boolean, "editInfoAdminsOnly": boolean, "description": str, "joinApproval": boolean})}), data: rec("Group", groupRecord{}), errs: eng},
	{method: "POST", path: "/v1/groups/{id}/members", handle: on((*server).addGroupMembers), id: "addGroupMembers", tag: tagGroups, summary: "Add members to a group", field: "addGroupParticipants",
		body: closed(nil, map[string]any{"chatId": typ("string", "description", "One member to add."), "participants": typ("array", "items", str, "description", "Several members to add.")}), data: rec("Group", groupRecord{}), errs: eng},
	{method: "DELETE", path: "/v1/groups/{id}/members/me", handle: on((*server).leaveGroup), id: "leaveGroup", tag: tagGroups, summary: "Leave a group", field: "leaveGroup", status: 204, errs: eng},
	{method: "DELETE", path: "/v1/groups/{id}/members/{chatId}", handle: func(s *server) http.Handler { return s.participantRoute(s.mutation.RemoveGroupParticipant) }, id: "removeGroupMember", tag: tagGroups, summary: "Remove a member from a group", field: "removeGroupParticipant", data: rec("Group", groupRecord{}), errs: eng},
	{method: "POST", path: "/v1/groups/{id}/members/{chatId}/admin", handle: func(s *server) http.Handler { return s.participantRoute(s.mutation.PromoteGroupParticipant) }, id: "promoteGroupMember", tag: tagGroups, summary: "Make a member an admin", field: "promoteGroupParticipant", data: rec("Group", groupRecord{}), errs: eng},
	{method: "DELETE", path: "/v1/groups/{id}/members/{chatId}/admin", handle: func(s *server) http.Handler { return s.participantRoute(s.mutation.DemoteGroupParticipant) }, id: "demoteGroupMember", tag: tagGroups, summary: "Take a member's admin rights away", field: "demoteGroupParticipant", data: rec("Group", groupRecord{}), errs: eng},
	{method: "PUT", path: "/v1/groups/{id}/picture", handle: on((*server).setGroupPicture), id: "setGroupPicture", tag: tagGroups, summary: "Set a group's picture (JSON with a URL, or the image itself)", field: "setGroupPicture",
		body: closed(nil, map[string]any{"fileDataUrl": str, "url": str, "fileName": str, "fileMimeType": str}), form: obj(nil, map[string]any{"file": binary, "fileDataUrl": str, "url": str, "fileName": str, "fileMimeType": str}), data: rec("Group", groupRecord{}), errs: eng},
	// The rest of a group's lifecycle (docs/groups.md, "Invites, join requests and communities").
	{method: "GET", path: "/v1/groups/{id}/invite", handle: on((*server).getGroupInvite), id: "getGroupInvite", tag: tagGroups, summary: "A group's invite link (admins only)", field: "groupInvite",
		query: []apiParam{engineParam}, data: rec("GroupInvite", model.GroupInvite{}), errs: engNS},
	{method: "POST", path: "/v1/groups/{id}/invite/reset", handle: on((*server).resetGroupInvite), id: "resetGroupInvite", tag: tagGroups, summary: "Revoke a group's invite link and make a new one (admins only)", field: "resetGroupInvite",
		query: []apiParam{engineParam}, data: rec("GroupInvite", model.GroupInvite{}), errs: engNS},
	{method: "GET", path: "/v1/groups/invites/{code}", handle: on((*server).previewGroupInvite), id: "previewGroupInvite", tag: tagGroups, summary: "What an invite code leads to, without joining", field: "groupInvitePreview",
		query: []apiParam{engineParam}, data: rec("GroupInvitePreview", model.GroupInvitePreview{}), errs: engNS},
	{method: "POST", path: "/v1/groups/join", handle: on((*server).joinGroup), id: "joinGroup", tag: tagGroups, summary: "Join a group by an invite code or link", field: "joinGroup",
		query: []apiParam{engineParam}, body: closed(nil, map[string]any{"code": typ("string", "description", "The invite code."), "link": typ("string", "description", "The invite link, https://chat.whatsapp.com/<code>.")}), data: rec("Group", groupRecord{}), errs: engNS},
	{method: "GET", path: "/v1/groups/{id}/requests", handle: on((*server).listGroupJoinRequests), id: "listGroupJoinRequests", tag: tagGroups, summary: "The pending requests to join a group (admins only)", field: "groupJoinRequests",
		query: page(engineParam), data: rec("GroupJoinRequest", model.GroupJoinRequest{}), list: true, errs: engNS},
	{method: "POST", path: "/v1/groups/{id}/requests/approve", handle: on(answerJoinRequests(true)), id: "approveGroupJoinRequests", tag: tagGroups, summary: "Approve requests to join a group (admins only)", field: "answerGroupJoinRequests",
		query: []apiParam{engineParam}, body: closed([]string{"participants"}, map[string]any{"participants": arrayOf(str)}), data: rec("JoinRequestAnswer", model.JoinRequestAnswer{}), errs: engNS},
	{method: "POST", path: "/v1/groups/{id}/requests/reject", handle: on(answerJoinRequests(false)), id: "rejectGroupJoinRequests", tag: tagGroups, summary: "Reject requests to join a group (admins only)", field: "answerGroupJoinRequests",
		query: []apiParam{engineParam}, body: closed([]string{"participants"}, map[string]any{"participants": arrayOf(str)}), data: rec("JoinRequestAnswer", model.JoinRequestAnswer{}), errs: engNS},
	{method: "GET", path: "/v1/groups/{id}/community", handle: on((*server).getGroupCommunity), id: "getGroupCommunity", tag: tagGroups, summary: "A group's community: whether it is one, its parent, a community's sub-groups", field: "groupCommunity",
		query: []apiParam{engineParam}, data: rec("GroupCommunity", model.GroupCommunity{}), errs: engNS},

	{method: "GET", path: "/v1/newsletters", handle: on((*server).listNewsletters), id: "listNewsletters", tag: tagNewsletter, summary: "List newsletters", field: "newsletterList", query: page(q("searchToken", "Text a newsletter's name holds.", str), q("includeArchive", "Accepted for compatibility; ignored.", boolean)), data: rec("Newsletter", newsletterRecord{}), list: true},
	{method: "POST", path: "/v1/newsletters", handle: on((*server).createNewsletter), id: "createNewsletter", tag: tagNewsletter, summary: "Create a newsletter", field: "createNewsletter",
		body: closed([]string{"name"}, map[string]any{"name": typ("string", "minLength", 1, "maxLength", 100), "description": typ("string", "maxLength", 2048)}), status: 201, data: rec("Newsletter", newsletterRecord{}), errs: eng},
	{method: "GET", path: "/v1/newsletters/{id}", handle: on((*server).getNewsletter), id: "getNewsletter", tag: tagNewsletter, summary: "One newsletter", field: "newsletter", data: rec("Newsletter", newsletterRecord{}), errs: notFnd},
	{method: "GET", path: "/v1/newsletters/invites/{code}", handle: on((*server).getNewsletterInvite), id: "getNewsletterInvite", tag: tagNewsletter, summary: "The newsletter an invite code opens, without following it", field: "newsletterInvite",
		query: []apiParam{engineParam}, data: rec("NewsletterPreview", model.NewsletterPreview{}), errs: engNS},
	{method: "POST", path: "/v1/newsletters/follow", handle: on((*server).followNewsletterByInvite), id: "followNewsletterByInvite", tag: tagNewsletter, summary: "Follow a newsletter by invite code or link (or id)", field: "followNewsletter",
		query: []apiParam{engineParam}, body: closed(nil, map[string]any{"invite": typ("string", "minLength", 1, "maxLength", 200), "id": typ("string")}), data: rec("Newsletter", newsletterRecord{}), errs: engNS},
	{method: "POST", path: "/v1/newsletters/{id}/follow", handle: on((*server).followNewsletter), id: "followNewsletter", tag: tagNewsletter, summary: "Follow a newsletter", field: "followNewsletter",
		query: []apiParam{engineParam}, data: rec("Newsletter", newsletterRecord{}), errs: engNS},
	{method: "DELETE", path: "/v1/newsletters/{id}/follow", handle: on((*server).unfollowNewsletter), id: "unfollowNewsletter", tag: tagNewsletter, summary: "Stop following a newsletter", field: "unfollowNewsletter",
		query: []apiParam{engineParam}, data: rec("Newsletter", newsletterRecord{}), errs: engNS},
	{method: "PUT", path: "/v1/newsletters/{id}/mute", handle: on((*server).muteNewsletter), id: "muteNewsletter", tag: tagNewsletter, summary: "Mute or unmute a newsletter", field: "muteNewsletter",
		query: []apiParam{engineParam}, body: closed([]string{"muted"}, map[string]any{"muted": typ("boolean")}), data: rec("Newsletter", newsletterRecord{}), errs: engNS},

	{method: "GET", path: "/v1/messages/{id}", handle: on((*server).getMessage), id: "getMessage", tag: tagMessages, summary: "One stored message", field: "message", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)}, data: ref("ChatMessage"), errs: notFnd},

	{method: "POST", path: "/v1/webhooks", handle: on((*server).createWebhook), id: "createWebhook", tag: tagWebhooks, summary: "Subscribe a URL to events", field: "createWebhook", body: bodyOf(webhookBody{}), status: 201, data: ref("Webhook")},
	{method: "GET", path: "/v1/webhooks", handle: on((*server).listWebhooks), id: "listWebhooks", tag: tagWebhooks, summary: "List webhooks", field: "webhookList", query: page(q("order", "By creation: desc (newest first, the default) or asc.", typ("string", "enum", []string{"asc", "desc"}))), data: ref("Webhook"), list: true},
	{method: "GET", path: "/v1/webhooks/{id}", handle: on((*server).getWebhook), id: "getWebhook", tag: tagWebhooks, summary: "One webhook", field: "webhook", data: ref("Webhook"), errs: notFnd},
	{method: "PATCH", path: "/v1/webhooks/{id}", handle: on((*server).updateWebhook), id: "updateWebhook", tag: tagWebhooks, summary: "Change a webhook's URL, events, description or status", field: "updateWebhook", body: bodyOf(webhookBody{}), data: ref("Webhook"), errs: notFnd},
	{method: "DELETE", path: "/v1/webhooks/{id}", handle: on((*server).deleteWebhook), id: "deleteWebhook", tag: tagWebhooks, summary: "Delete a webhook", field: "deleteWebhook", data: rec("Deleted", model.DeletePayload{}), errs: notFnd},
	{method: "POST", path: "/v1/webhooks/{id}/rotate-secret", handle: on((*server).rotateWebhookSecret), id: "rotateWebhookSecret", tag: tagWebhooks, summary: "Replace a webhook's signing secret", field: "rotateWebhookSecret", data: rec("WebhookSecret", model.RotateSecretPayload{}), errs: notFnd},
	{method: "GET", path: "/v1/webhooks/{id}/deliveries", handle: on((*server).listDeliveries), id: "listWebhookDeliveries", tag: tagWebhooks, summary: "The deliveries of a webhook with their attempts", field: "webhookDeliveries", query: page(q("status", "Only deliveries in this status.", str)), data: ref("Delivery"), list: true, errs: notFnd},
	{method: "POST", path: "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", handle: on((*server).redeliver), id: "redeliverWebhookDelivery", tag: tagWebhooks, summary: "Deliver an event again", field: "redeliverWebhookDelivery", status: 201, data: ref("Delivery"), errs: notFnd},

	{method: "GET", path: "/v1/boards", handle: on((*server).listBoards), id: "listBoards", tag: tagBoards, summary: "List boards", field: "boardList", query: page(q("domain", "Only boards of this domain.", str), q("agent_id", "Only boards of this agent.", str), q("agent_managed", "Only boards an agent manages (true) or not (false).", boolean), q("order", "Sort order.", str)), data: rec("Board", boardRecord{}), list: true},
	{method: "POST", path: "/v1/boards", handle: on((*server).openBoard), id: "openBoard", tag: tagBoards, summary: "Open (create or find) a board", field: "openBoard", body: bodyOf(boardBody{}), data: rec("Board", boardRecord{})},
	{method: "GET", path: "/v1/boards/{id}", handle: on((*server).getBoard), id: "getBoard", tag: tagBoards, summary: "One board with its columns", field: "board", data: rec("Board", boardRecord{}), errs: notFnd},
	{method: "GET", path: "/v1/boards/{id}/items", handle: on((*server).listBoardItems), id: "listBoardItems", tag: tagBoards, summary: "The items of a board", field: "boardItems", query: page(q("active_only", "Only active items.", boolean), q("status", "Only items in this status.", str), q("updated_since", "Only items updated at or after this time.", str), q("order", "Sort order.", str)), data: rec("BoardItem", itemRecord{}), list: true, errs: notFnd},
	{method: "POST", path: "/v1/boards/{id}/items", handle: on((*server).createBoardItem), id: "createBoardItem", tag: tagBoards, summary: "Add an item to a board (200 when it already existed)", field: "createBoardItem", body: bodyOf(itemBody{}), status: 201, data: rec("BoardItem", itemRecord{}), errs: notFnd},
	{method: "POST", path: "/v1/boards/{id}/items/bulk", handle: on((*server).upsertBoardItems), id: "upsertBoardItems", tag: tagBoards, summary: "Create or update many items at once", field: "upsertBoardItems", body: bodyOf(bulkBody{}), data: rec("BoardMergeReport", mergeReport{}), errs: notFnd},
	{method: "POST", path: "/v1/boards/{id}/items/find-similar", handle: on((*server).findSimilarBoardItems), id: "findSimilarBoardItems", tag: tagBoards, summary: "Find items like the ones given", field: "findSimilarBoardItems", body: bodyOf(similarBody{}), data: rec("SimilarItems", similarResult{}), errs: notFnd},
	{method: "PATCH", path: "/v1/boards/{id}/items/{itemId}", handle: on((*server).updateBoardItem), id: "updateBoardItem", tag: tagBoards, summary: "Change a board item", field: "updateBoardItem", body: bodyOf(itemBody{}), data: rec("BoardItem", itemRecord{}), errs: []int{404, 409}},

	{method: "GET", path: "/v1/audiences", handle: on((*server).listAudiences), id: "listAudiences", tag: tagAudiences, summary: "List audiences", field: "audienceList", query: page(q("order", "Sort order.", str)), data: rec("Audience", audienceRecord{}), list: true},
	{method: "POST", path: "/v1/audiences", handle: on((*server).createAudience), id: "createAudience", tag: tagAudiences, summary: "Create an audience", field: "createAudience", body: bodyOf(audienceBody{}), data: rec("Audience", audienceRecord{})},
	{method: "GET", path: "/v1/audiences/{id}", handle: on((*server).getAudience), id: "getAudience", tag: tagAudiences, summary: "One audience", field: "audience", data: rec("Audience", audienceRecord{}), errs: notFnd},
	{method: "PATCH", path: "/v1/audiences/{id}", handle: on((*server).updateAudience), id: "updateAudience", tag: tagAudiences, summary: "Rename an audience", field: "updateAudience", body: closed(nil, map[string]any{"name": str}), data: rec("Audience", audienceRecord{}), errs: notFnd},
	{method: "DELETE", path: "/v1/audiences/{id}", handle: on((*server).deleteAudience), id: "deleteAudience", tag: tagAudiences, summary: "Delete an audience", field: "deleteAudience", data: rec("Deleted", model.DeletePayload{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/audiences/{id}/contacts", handle: on((*server).addAudienceContacts), id: "addAudienceContacts", tag: tagAudiences, summary: "Append contacts to an audience", field: "addAudienceContacts", body: closed([]string{"contacts"}, map[string]any{"contacts": arrayOf(bodyOf(contactBody{}))}),
		data: obj([]string{"added", "skipped", "contactCount"}, map[string]any{"added": integer, "skipped": integer, "contactCount": integer}), errs: notFnd},
	{method: "PATCH", path: "/v1/audiences/{id}/contacts/{contactId}", handle: on((*server).updateAudienceContact), id: "updateAudienceContact", tag: tagAudiences, summary: "Change an audience contact's variables", field: "updateAudienceContact", body: bodyOf(contactBody{}), data: rec("AudienceContact", audienceContactRecord{}), errs: notFnd},
	{method: "DELETE", path: "/v1/audiences/{id}/contacts/{contactId}", handle: on((*server).removeAudienceContact), id: "removeAudienceContact", tag: tagAudiences, summary: "Remove a contact from an audience", field: "removeAudienceContact", data: obj([]string{"id"}, map[string]any{"id": str}), errs: notFnd},

	{method: "GET", path: "/v1/campaigns", handle: on((*server).listCampaigns), id: "listCampaigns", tag: tagCampaigns, summary: "List campaigns", field: "campaignList", query: page(q("order", "Sort order.", str), q("status", "Only campaigns in this status.", str), q("engineId", "Only campaigns pinned to this engine.", str)), data: rec("Campaign", view.Campaign{}), list: true},
	{method: "POST", path: "/v1/campaigns", handle: on((*server).createCampaign), id: "createCampaign", tag: tagCampaigns, summary: "Create and start a campaign to an audience", field: "createCampaign", body: bodyOf(campaignBody{}), data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},
	{method: "GET", path: "/v1/campaigns/{id}", handle: on((*server).getCampaign), id: "getCampaign", tag: tagCampaigns, summary: "One campaign with its progress", field: "campaign", data: rec("Campaign", view.Campaign{}), errs: notFnd},
	{method: "PATCH", path: "/v1/campaigns/{id}", handle: on((*server).updateCampaign), id: "updateCampaign", tag: tagCampaigns, summary: "Change the name or content of a pending or paused campaign", field: "updateCampaign", body: bodyOf(campaignPatch{}), data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/campaigns/{id}/pause", handle: func(s *server) http.Handler { return s.campaignAction(s.mutation.PauseCampaign) }, id: "pauseCampaign", tag: tagCampaigns, summary: "Pause a running campaign", field: "pauseCampaign", data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/campaigns/{id}/resume", handle: func(s *server) http.Handler { return s.campaignAction(s.mutation.ResumeCampaign) }, id: "resumeCampaign", tag: tagCampaigns, summary: "Resume a paused campaign", field: "resumeCampaign", data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/campaigns/{id}/cancel", handle: func(s *server) http.Handler { return s.campaignAction(s.mutation.CancelCampaign) }, id: "cancelCampaign", tag: tagCampaigns, summary: "Cancel a campaign for good", field: "cancelCampaign", data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},

	{method: "POST", path: "/v1/music/songs", handle: on((*server).generateSong), id: "generateSong", tag: tagMusic, summary: "Start generating a song", field: "generateSong", body: bodyOf(songBody{}), data: obj([]string{"jobId", "clips"}, map[string]any{"jobId": str, "clips": arrayOf(ref("Song"))}), errs: []int{503, 501}},
	{method: "GET", path: "/v1/music/songs/{id}", handle: on((*server).getSong), id: "getSong", tag: tagMusic, summary: "One generated song and its progress", field: "musicSong", data: rec("Song", clipRecord{}), errs: notFnd},
	{method: "POST", path: "/v1/music/uploads", handle: on((*server).uploadMusic), id: "uploadMusic", tag: tagMusic, summary: "Upload audio (JSON with a URL, or multipart)", field: "uploadMusicAudio", body: bodyOf(uploadBody{}), form: obj(nil, map[string]any{"fileName": typ("string", "description", "Must come before the file part."), "file": binary, "audioFile": typ("string", "contentMediaType", "application/octet-stream", "description", "Another name of the file part.")}), data: rec("MusicUpload", model.MusicUploadResult{}), errs: []int{503, 501}},
	{method: "GET", path: "/v1/music/account", handle: on((*server).musicAccount), id: "getMusicAccount", tag: tagMusic, summary: "The music credits left", field: "musicAccount", data: rec("MusicAccount", accountRecord{}), errs: []int{503, 501}},

	{method: "GET", path: "/v1/engines", handle: on((*server).listEngines), id: "listEngines", tag: tagEngines, summary: "List the workspace's engines", field: "engineList", query: pageParams, data: ref("Engine"), list: true},
	{method: "POST", path: "/v1/engines", handle: on((*server).createEngine), id: "createEngine", tag: tagEngines, summary: "Create an engine (a remote engine's token is shown once)", field: "createEngine",
		body: closed([]string{"kind"}, map[string]any{"kind": typ("string", "enum", []string{"sandbox", "gateway", "remote"}), "name": typ("string", "maxLength", 100)}), status: 201, data: ref("Engine"), errs: []int{409}},
	{method: "GET", path: "/v1/engines/{id}", handle: on((*server).getEngine), id: "getEngine", tag: tagEngines, summary: "One engine", field: "engine", data: ref("Engine"), errs: notFnd},
	{method: "DELETE", path: "/v1/engines/{id}", handle: on((*server).deleteEngine), id: "deleteEngine", tag: tagEngines, summary: "Delete an engine", field: "deleteEngine", data: rec("Deleted", model.DeletePayload{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/engines/{id}/default", handle: on((*server).setDefaultEngine), id: "setDefaultEngine", tag: tagEngines, summary: "Make an engine the workspace's default (the number that sends when a message names none and its chat's last engine is not connected)", field: "setDefaultEngine", data: ref("Engine"), errs: notFnd},
	{method: "POST", path: "/v1/engines/{id}/logout", handle: on((*server).logoutEngine), id: "logoutEngine", tag: tagEngines, summary: "Log a gateway engine out of WhatsApp", field: "logoutEngine", data: ref("Engine"), errs: eng},
	{method: "POST", path: "/v1/engines/{id}/restart", handle: on((*server).restartEngine), id: "restartEngine", tag: tagEngines, summary: "Restart a gateway engine's session on the same linked device (recovers a replaced or stuck session)", field: "restartEngine", data: ref("Engine"), errs: eng},
	{method: "GET", path: "/v1/engines/{id}/qr", handle: on((*server).engineQR), id: "getEngineQR", tag: tagEngines, summary: "The pairing QR code of a gateway engine (text, or PNG with format=png)", field: "enginePairingQR",
		query: []apiParam{q("format", "json (the default), png for the image, raw for the QR payload as text; without it, the Accept header chooses.", typ("string", "enum", []string{"json", "png", "raw"}))}, alt: map[string]any{"image/png": binary, "text/plain": str}, data: obj([]string{"qr"}, map[string]any{"qr": str}), errs: eng},
	{method: "POST", path: "/v1/engines/{id}/pairing-code", handle: on((*server).enginePairingCode), id: "getEnginePairingCode", tag: tagEngines, summary: "Pair a gateway engine by phone number instead of QR", field: "enginePairingCode",
		body: closed([]string{"phone"}, map[string]any{"phone": typ("string", "description", "The phone number of the WhatsApp account, in E.164 form.")}), data: obj([]string{"code"}, map[string]any{"code": str}), errs: eng},
	{method: "PATCH", path: "/v1/engines/{id}/calls", handle: on((*server).updateEngineCalls), id: "updateEngineCalls", tag: tagEngines, summary: "Set whether an engine rejects incoming calls, and the message it answers the caller with", field: "updateEngineCalls",
		body: closed(nil, map[string]any{"rejectCalls": boolean, "rejectCallsMessage": typ("string", "maxLength", 4096)}), data: ref("Engine"), errs: notFnd},

	{method: "GET", path: "/v1/profile", handle: on((*server).getProfile), id: "getProfile", tag: tagProfile, summary: "The account's own profile: push name, about text, picture", field: "profile",
		query: []apiParam{engineParam}, data: rec("Profile", profileRecord{}), errs: engNS},
	{method: "PATCH", path: "/v1/profile", handle: on((*server).updateProfile), id: "updateProfile", tag: tagProfile, summary: "Change the account's push name or about text", field: "updateProfile",
		query: []apiParam{engineParam}, body: closed(nil, map[string]any{"pushName": typ("string", "maxLength", 25), "about": typ("string", "maxLength", 139)}), data: rec("Profile", profileRecord{}), errs: engNS},
	{method: "PUT", path: "/v1/profile/picture", handle: on((*server).setProfilePicture), id: "setProfilePicture", tag: tagProfile, summary: "Replace the account's picture (JSON with a URL, or the image itself)", field: "setProfilePicture",
		query: []apiParam{engineParam}, body: closed(nil, map[string]any{"fileDataUrl": str, "url": str, "fileName": str, "fileMimeType": str}), form: obj(nil, map[string]any{"file": binary, "fileDataUrl": str, "url": str, "fileName": str, "fileMimeType": str}), data: rec("Profile", profileRecord{}), errs: engNS},
	{method: "DELETE", path: "/v1/profile/picture", handle: on((*server).removeProfilePicture), id: "removeProfilePicture", tag: tagProfile, summary: "Remove the account's picture", field: "removeProfilePicture",
		query: []apiParam{engineParam}, data: rec("Profile", profileRecord{}), errs: engNS},

	{method: "POST", path: "/v1/sandbox/group-changes", handle: on((*server).simulateGroupChange), id: "simulateGroupChange", tag: tagSandbox, summary: "Make the sandbox engine report a group change", field: "simulateGroupChange", body: bodyOf(groupChangeBody{}), status: 202,
		data: obj([]string{"accepted"}, map[string]any{"accepted": boolean})},
	{method: "POST", path: "/v1/status", handle: on((*server).postStatus), id: "postStatus", tag: tagStatus, summary: "Post a status (a story): a text on a colour, or an image, video or audio with a caption, to the account's contacts or chosen ones", field: "postStatus",
		query: []apiParam{engineParam}, body: closed([]string{"type"}, map[string]any{"type": typ("string", "enum", []string{"text", "image", "video", "audio"}), "text": typ("string", "maxLength", 700), "backgroundColor": str, "font": integer, "mediaUrl": str, "mediaBase64": str, "caption": typ("string", "maxLength", 1024), "audience": map[string]any{"oneOf": []any{typ("string", "enum", []string{"contacts"}), typ("array", "items", str, "minItems", 1, "maxItems", 256)}}, "engineId": str}),
		status: 201, data: rec("Status", model.Status{}), errs: engNS},
	{method: "GET", path: "/v1/status", handle: on((*server).listStatuses), id: "listStatuses", tag: tagStatus, summary: "Statuses, the account's and its contacts', newest first (unexpired unless includeExpired)", field: "statuses",
		query: page(engineParam, q("contact", "Only statuses this contact posted (E.164 or contact id).", str), q("fromMe", "Only the account's own (true) or only contacts' (false).", boolean), q("includeExpired", "Also statuses older than 24 hours.", boolean)), data: rec("Status", model.Status{}), list: true},
	{method: "GET", path: "/v1/status/{id}", handle: on((*server).getStatus), id: "getStatus", tag: tagStatus, summary: "One status", field: "storyStatus",
		data: rec("Status", model.Status{}), errs: []int{404}},
	{method: "DELETE", path: "/v1/status/{id}", handle: on((*server).deleteStatus), id: "deleteStatus", tag: tagStatus, summary: "Delete one of the account's statuses for everyone", field: "deleteStatus",
		data: rec("Status", model.Status{}), errs: []int{404, 409, 501, 503}},
	{method: "POST", path: "/v1/sandbox/statuses", handle: on((*server).simulateStatus), id: "simulateStatus", tag: tagSandbox, summary: "Make a contact of the sandbox engine post a status", field: "simulateStatus",
		body: closed([]string{"from"}, map[string]any{"from": str, "type": typ("string", "enum", []string{"text", "image"}), "text": str, "backgroundColor": str, "font": integer, "engineId": str}), status: 201, data: rec("Status", model.Status{}), errs: []int{404, 409, 503}},
	{method: "POST", path: "/v1/sandbox/calls", handle: on((*server).simulateCall), id: "simulateCall", tag: tagSandbox, summary: "Make the sandbox engine report an incoming call", field: "simulateCall",
		body: closed([]string{"from"}, map[string]any{"from": str, "video": boolean, "group": boolean, "engineId": str}), status: 201, data: rec("Call", callRecord{}), errs: []int{404, 409, 503}},
}
