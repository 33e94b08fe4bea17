package rest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/view"
)

// The API reference: an OpenAPI 3.1 document of every /v1 operation, built here
// from one table (apiOperations) and served at GET /v1/openapi.json. The tests in
// openapi_test.go keep it true: every routed /v1 operation is documented, every
// documented one is routed, and real answers validate against it.

// apiParam is a query parameter of an operation.
type apiParam struct {
	name, desc string
	schema     map[string]any
	required   bool
}

// apiOp is one documented operation.
type apiOp struct {
	method, path, id, tag, summary, scope string
	query                                 []apiParam
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

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func obj(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func typ(t string, extra ...any) map[string]any {
	s := map[string]any{"type": t}
	for i := 0; i+1 < len(extra); i += 2 {
		s[extra[i].(string)] = extra[i+1]
	}
	return s
}

func nullable(t string, extra ...any) map[string]any {
	s := typ(t, extra...)
	s["type"] = []string{t, "null"}
	return s
}

func arrayOf(items map[string]any) map[string]any {
	return map[string]any{"type": "array", "items": items}
}

var (
	anyObject = map[string]any{"type": "object"}
	str       = typ("string")
	dateTime  = typ("string", "format", "date-time")
	boolean   = typ("boolean")
	integer   = typ("integer")
	okData    = obj(nil, map[string]any{"ok": boolean})
	binary    = typ("string", "contentMediaType", "application/octet-stream")

	// messageForm is the multipart form of a message: the JSON body's fields as
	// parts, and the attachment as the mediaFile part.
	messageForm = func() map[string]any {
		f := bodyOf(messageBody{})
		props := map[string]any{"mediaFile": binary}
		for k, v := range f["properties"].(map[string]any) {
			props[k] = v
		}
		return obj(nil, props)
	}()

	// directSchema documents the typing fields of a direct send on a body schema.
	directSchema = func(s map[string]any) map[string]any {
		props := map[string]any{}
		for k, v := range s["properties"].(map[string]any) {
			props[k] = v
		}
		props["withTyping"] = typ("boolean", "default", true, "description", "Show \"typing…\" for 0.4-0.8 s (plus typingSeconds) before a text message, on engines that can; ignored for media and polls.")
		props["typingSeconds"] = typ("number", "minimum", 0, "maximum", 25, "default", 0, "description", "Seconds of typing added to the 0.4-0.8 s.")
		out := map[string]any{}
		for k, v := range s {
			out[k] = v
		}
		out["properties"] = props
		return out
	}

	pageParams = []apiParam{
		{"limit", "How many records to return (default 50).", typ("integer", "minimum", 1, "maximum", 200), false},
		{"skip", "How many records to pass over first.", typ("integer", "minimum", 0), false},
	}
)

func page(extra ...apiParam) []apiParam { return append(append([]apiParam{}, pageParams...), extra...) }

func q(name, desc string, schema map[string]any) apiParam {
	return apiParam{name: name, desc: desc, schema: schema}
}

// apiSchemas are the named shapes of the document.
var apiSchemas = map[string]any{
	"Error": obj([]string{"success", "error"}, map[string]any{
		"success": typ("boolean", "const", false),
		"error": obj([]string{"code", "message"}, map[string]any{
			"code":      typ("string", "description", "A stable machine-readable error code (docs/errors.md)."),
			"message":   typ("string", "description", "What went wrong, for a human."),
			"requestId": typ("string", "description", "The X-Request-Id of the request, for support."),
			"details": arrayOf(obj([]string{"path", "code", "message"}, map[string]any{
				"path": str, "code": str, "message": str,
			})),
		}),
	}),
	"Ping": obj([]string{"api", "accountId", "whatsappConnections"}, map[string]any{
		"api":       str,
		"accountId": str,
		"whatsappConnections": arrayOf(obj([]string{"id", "type", "connected"}, map[string]any{
			"id": str, "type": str, "connected": boolean,
		})),
		"message": str,
	}),
	"Account": obj([]string{"id", "name", "userEmail", "timezone", "createdAt"}, map[string]any{
		"id": str, "name": str, "userEmail": nullable("string"), "timezone": nullable("string"), "createdAt": dateTime,
	}),
	"MessageKey":  dataOf(view.Key{}),
	"ChatMessage": dataOf(view.ChatMessage{}),
	"Message": obj([]string{"id", "to", "type", "status", "createdAt"}, map[string]any{
		"id":                typ("string", "description", "The queue id of a queued or scheduled message, the network key otherwise."),
		"waMessageKey":      ref("MessageKey"),
		"to":                str,
		"type":              typ("string", "enum", []string{"text", "media", "poll"}),
		"text":              str,
		"mediaUrl":          str,
		"mediaKind":         str,
		"pollQuestion":      str,
		"pollOptions":       arrayOf(str),
		"pollAllowMultiple": boolean,
		"status":            str,
		"sendAt":            dateTime,
		"createdAt":         dateTime,
		"confirmedAt":       dateTime,
		"receivedAt":        dateTime,
		"readAt":            dateTime,
		"playedAt":          dateTime,
		"failedAt":          dateTime,
		"failureReason":     str,
		"secret":            typ("string", "description", "The caller's correlation tag, as given; it does not prevent duplicate sends."),
		"linkPreview":       dataOf(switchboard.LinkPreview{}),
		"campaignId":        str,
	}),
	"Webhook": obj([]string{"id", "url", "events", "description", "status", "createdAt"}, map[string]any{
		"id": str, "url": typ("string", "format", "uri"), "events": arrayOf(str), "description": str,
		"status": str, "createdAt": dateTime,
		"secret": typ("string", "description", "The signing secret; only in the answer to a create."),
	}),
	"Delivery": obj([]string{"id", "webhookId", "eventId", "type", "status", "attempts", "createdAt", "attemptLog"}, map[string]any{
		"id": str, "webhookId": str, "eventId": str, "type": str, "status": str, "attempts": integer,
		"nextAttemptAt": dateTime, "lastAttemptAt": dateTime, "lastError": str, "createdAt": dateTime,
		"attemptLog": arrayOf(obj([]string{"number", "at"}, map[string]any{
			"number": integer, "at": dateTime, "statusCode": integer, "error": str,
		})),
	}),
	"Engine": obj([]string{"id", "type", "connected", "state", "stream", "hasSynced", "kind", "name", "connectedAt", "disconnectedAt", "createdAt", "updatedAt"}, map[string]any{
		"id": str, "type": str, "connected": boolean, "state": str,
		"stream": nullable("string"), "hasSynced": nullable("boolean"),
		"kind":            typ("string", "enum", []string{"sandbox", "gateway", "remote"}),
		"name":            str,
		"tokenPrefix":     str,
		"restriction":     str,
		"restrictedUntil": dateTime,
		"connectedAt":     nullable("string", "format", "date-time"),
		"disconnectedAt":  nullable("string", "format", "date-time"),
		"createdAt":       dateTime,
		"updatedAt":       dateTime,
		"token":           typ("string", "description", "A remote engine's token; only in the answer to a create."),
	}),
	"Chat": obj([]string{"chatId", "chatType", "pinned", "archived", "unreadCount", "markedUnread"}, map[string]any{
		"chatId": str, "name": str, "chatType": str, "pinned": boolean, "archived": boolean,
		"lastMessageAt": dateTime, "unreadCount": integer, "markedUnread": boolean,
		"lastMessageText": str, "lastMessageFromMe": boolean, "messages": arrayOf(ref("ChatMessage")),
	}),
}

// idParam names the path parameters the document uses for the router's; chi
// routes sibling templates with different names (/messages/{chatId} beside
// /messages/{id}), which OpenAPI forbids, so the document names them alike.
var pathParamDesc = map[string]string{
	"id":           "The id of the resource.",
	"chatId":       "A chat: an E.164 phone number (+15551234567) or a chat id (<digits>@c.us, @g.us or @newsletter).",
	"waMessageKey": "The serialized network key of a message.",
	"deliveryId":   "The id of a delivery.",
	"itemId":       "The id of a board item.",
	"contactId":    "The id of an audience contact.",
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
)

// Error statuses: engine-backed operations can find no engine (503) or time out (504).
var (
	eng    = []int{404, 409, 503, 504}
	notFnd = []int{404}
)

// apiOperations is every /v1 operation of the router, in its order.
var apiOperations = []apiOp{
	{method: "GET", path: "/v1/openapi.json", id: "getOpenAPI", tag: "Reference", summary: "This OpenAPI document", public: true},
	{method: "GET", path: "/v1/ping", id: "ping", tag: tagAccount, summary: "Check the API key and list the workspace's WhatsApp connections", data: ref("Ping")},
	{method: "GET", path: "/v1/account", id: "getAccount", tag: tagAccount, summary: "The workspace the API key belongs to", scope: "account:read", data: ref("Account")},

	{method: "GET", path: "/v1/scheduled-messages", id: "listScheduledMessages", tag: tagScheduled, summary: "List queued and scheduled messages", scope: "messages:read",
		query: page(q("chatId", "Only messages to this chat.", str), q("searchToken", "Text a message holds.", str), q("status", "Only messages in this status.", str), q("order", "Sort order.", str)), data: ref("Message"), list: true},
	{method: "POST", path: "/v1/scheduled-messages/{chatId}", id: "scheduleMessage", tag: tagScheduled, summary: "Queue a message to a chat, now or at sendAt", scope: "messages:write",
		body: bodyOf(messageBody{}), form: messageForm, header: []apiParam{q("Idempotency-Key", "Makes a retried request answer the message first queued (200) instead of queueing another.", typ("string", "maxLength", 64))}, status: 201, data: ref("Message"), errs: []int{409}},
	{method: "GET", path: "/v1/scheduled-messages/{id}", id: "getScheduledMessage", tag: tagScheduled, summary: "One queued or scheduled message", scope: "messages:read", data: ref("Message"), errs: notFnd},
	{method: "PATCH", path: "/v1/scheduled-messages/{id}", id: "updateScheduledMessage", tag: tagScheduled, summary: "Change a message that has not been sent yet", scope: "messages:write",
		body: bodyOf(messageBody{}), form: messageForm, data: ref("Message"), errs: []int{404, 409}},
	{method: "DELETE", path: "/v1/scheduled-messages/{id}", id: "cancelScheduledMessage", tag: tagScheduled, summary: "Cancel a message that has not been sent yet", scope: "messages:write",
		data: rec("Deleted", model.DeletePayload{}), errs: []int{404, 409}},

	{method: "POST", path: "/v1/messages/{chatId}", id: "sendMessage", tag: tagMessages, summary: "Send a message to a chat through an engine and wait for its key", scope: "messages:write",
		body: directSchema(bodyOf(directBody{})), form: directSchema(messageForm), status: 201, data: ref("Message"), errs: eng},
	{method: "GET", path: "/v1/messages", id: "listStoredMessages", tag: tagMessages, summary: "Search the message store", scope: "chats:read",
		query: page(q("chatId", "Only messages of this chat.", str), q("searchToken", "Text a message holds.", str), q("queryAny", "Words any of which a message holds.", str), q("order", "Sort order.", str), q("since", "Only messages at or after this time.", str), q("until", "Only messages before this time.", str), q("messageTypes", "Only these message types (repeated or comma-separated).", str), q("mime", "Only attachments of this MIME type.", str), q("filenameContains", "Only attachments whose file name holds this.", str), q("hasMedia", "Only messages with (true) or without (false) an attachment.", boolean), q("sender", "Only messages from this sender.", str), q("loadFromPhoneIfNeeded", "Accepted for compatibility; ignored.", boolean), q("includeMediaContent", "Accepted for compatibility; ignored.", boolean)), data: ref("ChatMessage"), list: true},
	{method: "GET", path: "/v1/messages/ack/{waMessageKey}", id: "getMessageAck", tag: tagMessages, summary: "The delivery acknowledgement level of a message", scope: "chats:read", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)},
		data: obj([]string{"ack"}, map[string]any{"ack": integer}), errs: eng},
	{method: "POST", path: "/v1/messages/acks", id: "getMessageAcks", tag: tagMessages, summary: "The acknowledgement levels of several messages", scope: "chats:read",
		body: closed([]string{"messageKeys"}, map[string]any{"messageKeys": arrayOf(str), "chatId": str}), data: rec("MessageAck", model.MessageAck{}), list: true, errs: eng},
	{method: "POST", path: "/v1/messages/load_older/{chatId}", id: "loadOlderMessages", tag: tagMessages, summary: "Fetch older history of a chat from the phone into the store", scope: "chats:read",
		body: closed(nil, map[string]any{"pages": typ("integer", "minimum", 1, "maximum", 10), "until_date": typ("string", "description", "Stop at messages older than this date.")}), bodyOptional: true, data: rec("LoadOlderResult", model.LoadOlderResult{}), errs: eng},
	{method: "GET", path: "/v1/messages/media/{waMessageKey}", id: "getMessageMedia", tag: tagMessages, summary: "Download the attachment of a message", scope: "chats:read",
		query: []apiParam{q("chatId", "The chat of the message, when the key is only its id (a phone number or chat id).", str), q("maxAttempts", "How many download attempts to make while the engine is still fetching, 1.5 s apart (1 answers at once).", typ("integer", "minimum", 1, "maximum", 10, "default", 6))},
		data:  rec("MessageMedia", mediaRecord{}), errs: eng},
	{method: "POST", path: "/v1/messages/reactions/{waMessageKey}", id: "reactToMessage", tag: tagMessages, summary: "React to a message with an emoji (empty removes the reaction)", scope: "chats:write", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)},
		body: closed([]string{"emoji"}, map[string]any{"emoji": typ("string", "description", "The emoji; empty removes the reaction.")}), data: okData, errs: eng},
	{method: "POST", path: "/v1/messages/pin/{waMessageKey}", id: "pinMessage", tag: tagMessages, summary: "Pin a message in its chat", scope: "chats:write", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)},
		body: closed(nil, map[string]any{"duration": typ("integer", "description", "How long to pin, in seconds.")}), bodyOptional: true, data: okData, errs: eng},
	{method: "POST", path: "/v1/messages/unpin/{waMessageKey}", id: "unpinMessage", tag: tagMessages, summary: "Unpin a message", scope: "chats:write", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)}, data: okData, errs: eng},
	{method: "GET", path: "/v1/messages/pinned/{chatId}", id: "listPinnedMessages", tag: tagMessages, summary: "The pinned messages of a chat", scope: "chats:read",
		data: rec("PinnedMessage", pinnedMessage{}), list: true, errs: notFnd},

	{method: "GET", path: "/v1/latest-chats", id: "latestChats", tag: tagChats, summary: "The most recent chats with their latest messages", scope: "chats:read",
		query: []apiParam{
			q("numberOfChats", "How many chats.", typ("integer", "minimum", 1, "maximum", 200)),
			q("numberOfMessages", "How many messages per chat.", typ("integer", "minimum", 0, "maximum", 100)),
		}, data: obj([]string{"chats", "totalChats", "numberOfChats", "numberOfMessages"}, map[string]any{"totalChats": integer, "numberOfChats": integer, "numberOfMessages": integer, "chats": arrayOf(ref("Chat"))})},
	{method: "GET", path: "/v1/chats", id: "listChats", tag: tagChats, summary: "List chats", scope: "chats:read",
		query: page(q("searchToken", "Text a chat's name holds.", str), q("filter", "A named subset of chats (such as unread).", str), q("kinds", "Only chats of these kinds (repeated or comma-separated).", str), q("since", "Only chats active at or after this time.", str), q("includeWithoutName", "Include chats without a name.", boolean), q("includeArchive", "Include archived chats.", boolean), q("includeLastMessage", "Add the last message's text and side (lastMessageText, lastMessageFromMe); left out by default.", boolean), q("includeExtendedInfo", "Accepted for compatibility; ignored.", boolean)),
		data:  ref("Chat"), list: true},
	{method: "GET", path: "/v1/chats/{id}", id: "getChat", tag: tagChats, summary: "One chat", scope: "chats:read", data: ref("Chat"), errs: notFnd},
	{method: "GET", path: "/v1/chats/{chatId}/participants", id: "listParticipants", tag: tagChats, summary: "The participants of a group chat", scope: "chats:read",
		query: []apiParam{pageParams[1], q("limit", "How many participants to return.", typ("integer", "minimum", 1, "maximum", 500)), q("searchToken", "Text a participant's name or number holds.", str)},
		data:  dataOf(model.Participant{}), list: true, errs: eng},
	{method: "POST", path: "/v1/chats/{chatId}/mark_read", id: "markChatRead", tag: tagChats, summary: "Mark a chat read", scope: "chats:write", data: okData, errs: eng},
	{method: "POST", path: "/v1/chats/{chatId}/archive", id: "archiveChat", tag: tagChats, summary: "Archive a chat", scope: "chats:write", data: okData, errs: eng},
	{method: "POST", path: "/v1/chats/{chatId}/unarchive", id: "unarchiveChat", tag: tagChats, summary: "Move a chat out of the archive", scope: "chats:write", data: okData, errs: eng},

	{method: "GET", path: "/v1/contacts", id: "listContacts", tag: tagContacts, summary: "List contacts", scope: "contacts:read",
		query: []apiParam{q("limit", "How many contacts to return (default 10); -1 returns every contact in one answer.", map[string]any{"type": "integer", "default": 10, "oneOf": []any{typ("integer", "const", -1), typ("integer", "minimum", 1, "maximum", 200)}}), pageParams[1], q("searchToken", "Text a contact's name or number holds.", str), q("includeArchive", "Accepted for compatibility; ignored.", boolean)}, data: rec("Contact", contactRecord{}), list: true},
	{method: "GET", path: "/v1/contacts/{id}/common_groups", id: "listCommonGroups", tag: tagContacts, summary: "The groups shared with a contact", scope: "groups:read",
		query: pageParams, data: rec("GroupSummary", groupItem{}), list: true, errs: eng},

	{method: "GET", path: "/v1/groups", id: "listGroups", tag: tagGroups, summary: "List groups", scope: "groups:read", query: page(q("searchToken", "Text a group's name holds.", str), q("includeArchive", "Include archived groups.", boolean)), data: rec("GroupSummary", groupItem{}), list: true},
	{method: "POST", path: "/v1/groups", id: "createGroup", tag: tagGroups, summary: "Create a group", scope: "groups:write",
		body: closed([]string{"name", "participants"}, map[string]any{"name": str, "participants": arrayOf(str)}), data: rec("Group", groupRecord{}), errs: eng},
	{method: "GET", path: "/v1/groups/{id}", id: "getGroup", tag: tagGroups, summary: "One group", scope: "groups:read", query: []apiParam{q("include", "Extra parts of the group to include.", str)}, data: rec("Group", groupRecord{}), errs: eng},
	{method: "PATCH", path: "/v1/groups/{id}", id: "updateGroup", tag: tagGroups, summary: "Rename a group or change its description or settings", scope: "groups:write", body: closed(nil, map[string]any{"name": str, "settings": closed(nil, map[string]any{"announce": boolean, "restrict": boolean, "editInfoAdminsOnly": boolean, "description": str})}), data: rec("Group", groupRecord{}), errs: eng},
	{method: "POST", path: "/v1/groups/{id}/members", id: "addGroupMembers", tag: tagGroups, summary: "Add members to a group", scope: "groups:write",
		body: closed(nil, map[string]any{"chatId": typ("string", "description", "One member to add."), "participants": typ("array", "items", str, "description", "Several members to add.")}), data: rec("Group", groupRecord{}), errs: eng},
	{method: "DELETE", path: "/v1/groups/{id}/members/me", id: "leaveGroup", tag: tagGroups, summary: "Leave a group", scope: "groups:write", status: 204, errs: eng},
	{method: "DELETE", path: "/v1/groups/{id}/members/{chatId}", id: "removeGroupMember", tag: tagGroups, summary: "Remove a member from a group", scope: "groups:write", data: rec("Group", groupRecord{}), errs: eng},
	{method: "POST", path: "/v1/groups/{id}/members/{chatId}/admin", id: "promoteGroupMember", tag: tagGroups, summary: "Make a member an admin", scope: "groups:write", data: rec("Group", groupRecord{}), errs: eng},
	{method: "DELETE", path: "/v1/groups/{id}/members/{chatId}/admin", id: "demoteGroupMember", tag: tagGroups, summary: "Take a member's admin rights away", scope: "groups:write", data: rec("Group", groupRecord{}), errs: eng},
	{method: "PUT", path: "/v1/groups/{id}/picture", id: "setGroupPicture", tag: tagGroups, summary: "Set a group's picture (JSON with a URL, or the image itself)", scope: "groups:write",
		body: closed(nil, map[string]any{"fileDataUrl": str, "url": str, "fileName": str, "fileMimeType": str}), form: obj(nil, map[string]any{"file": binary, "fileDataUrl": str, "url": str, "fileName": str, "fileMimeType": str}), data: rec("Group", groupRecord{}), errs: eng},

	{method: "GET", path: "/v1/newsletters", id: "listNewsletters", tag: tagNewsletter, summary: "List newsletters", scope: "newsletters:read", query: page(q("searchToken", "Text a newsletter's name holds.", str), q("includeArchive", "Accepted for compatibility; ignored.", boolean)), data: rec("Newsletter", newsletterRecord{}), list: true},
	{method: "POST", path: "/v1/newsletters", id: "createNewsletter", tag: tagNewsletter, summary: "Create a newsletter", scope: "newsletters:write",
		body: closed([]string{"name"}, map[string]any{"name": typ("string", "minLength", 1, "maxLength", 100), "description": typ("string", "maxLength", 2048)}), status: 201, data: rec("Newsletter", newsletterRecord{}), errs: eng},
	{method: "GET", path: "/v1/newsletters/{id}", id: "getNewsletter", tag: tagNewsletter, summary: "One newsletter", scope: "newsletters:read", data: rec("Newsletter", newsletterRecord{}), errs: notFnd},

	{method: "GET", path: "/v1/messages/{id}", id: "getMessage", tag: tagMessages, summary: "One stored message", scope: "chats:read", query: []apiParam{q("chatId", "The chat of the message, when the key alone does not name it.", str)}, data: ref("ChatMessage"), errs: notFnd},

	{method: "POST", path: "/v1/webhooks", id: "createWebhook", tag: tagWebhooks, summary: "Subscribe a URL to events", scope: "webhooks:write", body: bodyOf(webhookBody{}), status: 201, data: ref("Webhook")},
	{method: "GET", path: "/v1/webhooks", id: "listWebhooks", tag: tagWebhooks, summary: "List webhooks", scope: "webhooks:read", query: page(q("order", "By creation: desc (newest first, the default) or asc.", typ("string", "enum", []string{"asc", "desc"}))), data: ref("Webhook"), list: true},
	{method: "GET", path: "/v1/webhooks/{id}", id: "getWebhook", tag: tagWebhooks, summary: "One webhook", scope: "webhooks:read", data: ref("Webhook"), errs: notFnd},
	{method: "PATCH", path: "/v1/webhooks/{id}", id: "updateWebhook", tag: tagWebhooks, summary: "Change a webhook's URL, events, description or status", scope: "webhooks:write", body: bodyOf(webhookBody{}), data: ref("Webhook"), errs: notFnd},
	{method: "DELETE", path: "/v1/webhooks/{id}", id: "deleteWebhook", tag: tagWebhooks, summary: "Delete a webhook", scope: "webhooks:write", data: rec("Deleted", model.DeletePayload{}), errs: notFnd},
	{method: "POST", path: "/v1/webhooks/{id}/rotate-secret", id: "rotateWebhookSecret", tag: tagWebhooks, summary: "Replace a webhook's signing secret", scope: "webhooks:write", data: rec("WebhookSecret", model.RotateSecretPayload{}), errs: notFnd},
	{method: "GET", path: "/v1/webhooks/{id}/deliveries", id: "listWebhookDeliveries", tag: tagWebhooks, summary: "The deliveries of a webhook with their attempts", scope: "webhooks:read", query: page(q("status", "Only deliveries in this status.", str)), data: ref("Delivery"), list: true, errs: notFnd},
	{method: "POST", path: "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", id: "redeliverWebhookDelivery", tag: tagWebhooks, summary: "Deliver an event again", scope: "webhooks:write", status: 201, data: ref("Delivery"), errs: notFnd},

	{method: "GET", path: "/v1/boards", id: "listBoards", tag: tagBoards, summary: "List boards", scope: "boards:read", query: page(q("domain", "Only boards of this domain.", str), q("agent_id", "Only boards of this agent.", str), q("agent_managed", "Only boards an agent manages (true) or not (false).", boolean), q("order", "Sort order.", str)), data: rec("Board", boardRecord{}), list: true},
	{method: "POST", path: "/v1/boards", id: "openBoard", tag: tagBoards, summary: "Open (create or find) a board", scope: "boards:write", body: bodyOf(boardBody{}), data: rec("Board", boardRecord{})},
	{method: "GET", path: "/v1/boards/{id}", id: "getBoard", tag: tagBoards, summary: "One board with its columns", scope: "boards:read", data: rec("Board", boardRecord{}), errs: notFnd},
	{method: "GET", path: "/v1/boards/{id}/items", id: "listBoardItems", tag: tagBoards, summary: "The items of a board", scope: "boards:read", query: page(q("active_only", "Only active items.", boolean), q("status", "Only items in this status.", str), q("updated_since", "Only items updated at or after this time.", str), q("order", "Sort order.", str)), data: rec("BoardItem", itemRecord{}), list: true, errs: notFnd},
	{method: "POST", path: "/v1/boards/{id}/items", id: "createBoardItem", tag: tagBoards, summary: "Add an item to a board (200 when it already existed)", scope: "boards:write", body: bodyOf(itemBody{}), status: 201, data: rec("BoardItem", itemRecord{}), errs: notFnd},
	{method: "POST", path: "/v1/boards/{id}/items/bulk", id: "upsertBoardItems", tag: tagBoards, summary: "Create or update many items at once", scope: "boards:write", body: bodyOf(bulkBody{}), data: rec("BoardMergeReport", mergeReport{}), errs: notFnd},
	{method: "POST", path: "/v1/boards/{id}/items/find-similar", id: "findSimilarBoardItems", tag: tagBoards, summary: "Find items like the ones given", scope: "boards:read", body: bodyOf(similarBody{}), data: rec("SimilarItems", similarResult{}), errs: notFnd},
	{method: "PATCH", path: "/v1/boards/{id}/items/{itemId}", id: "updateBoardItem", tag: tagBoards, summary: "Change a board item", scope: "boards:write", body: bodyOf(itemBody{}), data: rec("BoardItem", itemRecord{}), errs: []int{404, 409}},

	{method: "GET", path: "/v1/audiences", id: "listAudiences", tag: tagAudiences, summary: "List audiences", scope: "audiences:read", query: page(q("order", "Sort order.", str)), data: rec("Audience", audienceRecord{}), list: true},
	{method: "POST", path: "/v1/audiences", id: "createAudience", tag: tagAudiences, summary: "Create an audience", scope: "audiences:write", body: bodyOf(audienceBody{}), data: rec("Audience", audienceRecord{})},
	{method: "GET", path: "/v1/audiences/{id}", id: "getAudience", tag: tagAudiences, summary: "One audience", scope: "audiences:read", data: rec("Audience", audienceRecord{}), errs: notFnd},
	{method: "PATCH", path: "/v1/audiences/{id}", id: "updateAudience", tag: tagAudiences, summary: "Rename an audience", scope: "audiences:write", body: closed(nil, map[string]any{"name": str}), data: rec("Audience", audienceRecord{}), errs: notFnd},
	{method: "DELETE", path: "/v1/audiences/{id}", id: "deleteAudience", tag: tagAudiences, summary: "Delete an audience", scope: "audiences:write", data: rec("Deleted", model.DeletePayload{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/audiences/{id}/contacts", id: "addAudienceContacts", tag: tagAudiences, summary: "Append contacts to an audience", scope: "audiences:write", body: closed([]string{"contacts"}, map[string]any{"contacts": arrayOf(bodyOf(contactBody{}))}),
		data: obj([]string{"added", "skipped", "contactCount"}, map[string]any{"added": integer, "skipped": integer, "contactCount": integer}), errs: notFnd},
	{method: "PATCH", path: "/v1/audiences/{id}/contacts/{contactId}", id: "updateAudienceContact", tag: tagAudiences, summary: "Change an audience contact's variables", scope: "audiences:write", body: bodyOf(contactBody{}), data: rec("AudienceContact", audienceContactRecord{}), errs: notFnd},
	{method: "DELETE", path: "/v1/audiences/{id}/contacts/{contactId}", id: "removeAudienceContact", tag: tagAudiences, summary: "Remove a contact from an audience", scope: "audiences:write", data: obj([]string{"id"}, map[string]any{"id": str}), errs: notFnd},

	{method: "GET", path: "/v1/campaigns", id: "listCampaigns", tag: tagCampaigns, summary: "List campaigns", scope: "campaigns:read", query: page(q("order", "Sort order.", str), q("status", "Only campaigns in this status.", str)), data: rec("Campaign", view.Campaign{}), list: true},
	{method: "POST", path: "/v1/campaigns", id: "createCampaign", tag: tagCampaigns, summary: "Create and start a campaign to an audience", scope: "campaigns:write", body: bodyOf(campaignBody{}), data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},
	{method: "GET", path: "/v1/campaigns/{id}", id: "getCampaign", tag: tagCampaigns, summary: "One campaign with its progress", scope: "campaigns:read", data: rec("Campaign", view.Campaign{}), errs: notFnd},
	{method: "PATCH", path: "/v1/campaigns/{id}", id: "updateCampaign", tag: tagCampaigns, summary: "Change the name or content of a pending or paused campaign", scope: "campaigns:write", body: bodyOf(campaignPatch{}), data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/campaigns/{id}/pause", id: "pauseCampaign", tag: tagCampaigns, summary: "Pause a running campaign", scope: "campaigns:write", data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/campaigns/{id}/resume", id: "resumeCampaign", tag: tagCampaigns, summary: "Resume a paused campaign", scope: "campaigns:write", data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/campaigns/{id}/cancel", id: "cancelCampaign", tag: tagCampaigns, summary: "Cancel a campaign for good", scope: "campaigns:write", data: rec("Campaign", view.Campaign{}), errs: []int{404, 409}},

	{method: "POST", path: "/v1/music/songs", id: "generateSong", tag: tagMusic, summary: "Start generating a song", scope: "music:write", body: bodyOf(songBody{}), data: obj([]string{"jobId", "clips"}, map[string]any{"jobId": str, "clips": arrayOf(ref("Song"))}), errs: []int{503, 501}},
	{method: "GET", path: "/v1/music/songs/{id}", id: "getSong", tag: tagMusic, summary: "One generated song and its progress", scope: "music:read", data: rec("Song", clipRecord{}), errs: notFnd},
	{method: "POST", path: "/v1/music/uploads", id: "uploadMusic", tag: tagMusic, summary: "Upload audio (JSON with a URL, or multipart)", scope: "music:write", body: bodyOf(uploadBody{}), form: obj(nil, map[string]any{"fileName": typ("string", "description", "Must come before the file part."), "file": binary, "audioFile": typ("string", "contentMediaType", "application/octet-stream", "description", "Another name of the file part.")}), data: rec("MusicUpload", model.MusicUploadResult{}), errs: []int{503, 501}},
	{method: "GET", path: "/v1/music/account", id: "getMusicAccount", tag: tagMusic, summary: "The music credits left", scope: "music:read", data: rec("MusicAccount", accountRecord{}), errs: []int{503, 501}},

	{method: "GET", path: "/v1/engines", id: "listEngines", tag: tagEngines, summary: "List the workspace's engines", scope: "engines:read", query: pageParams, data: ref("Engine"), list: true},
	{method: "POST", path: "/v1/engines", id: "createEngine", tag: tagEngines, summary: "Create an engine (a remote engine's token is shown once)", scope: "engines:write",
		body: closed([]string{"kind"}, map[string]any{"kind": typ("string", "enum", []string{"sandbox", "gateway", "remote"}), "name": typ("string", "maxLength", 100)}), status: 201, data: ref("Engine"), errs: []int{409}},
	{method: "GET", path: "/v1/engines/{id}", id: "getEngine", tag: tagEngines, summary: "One engine", scope: "engines:read", data: ref("Engine"), errs: notFnd},
	{method: "DELETE", path: "/v1/engines/{id}", id: "deleteEngine", tag: tagEngines, summary: "Delete an engine", scope: "engines:write", data: rec("Deleted", model.DeletePayload{}), errs: []int{404, 409}},
	{method: "POST", path: "/v1/engines/{id}/logout", id: "logoutEngine", tag: tagEngines, summary: "Log a gateway engine out of WhatsApp", scope: "engines:write", data: ref("Engine"), errs: eng},
	{method: "GET", path: "/v1/engines/{id}/qr", id: "getEngineQR", tag: tagEngines, summary: "The pairing QR code of a gateway engine (text, or PNG with format=png)", scope: "engines:write",
		query: []apiParam{q("format", "json (the default), png for the image, raw for the QR payload as text; without it, the Accept header chooses.", typ("string", "enum", []string{"json", "png", "raw"}))}, alt: map[string]any{"image/png": binary, "text/plain": str}, data: obj([]string{"qr"}, map[string]any{"qr": str}), errs: eng},
	{method: "POST", path: "/v1/engines/{id}/pairing-code", id: "getEnginePairingCode", tag: tagEngines, summary: "Pair a gateway engine by phone number instead of QR", scope: "engines:write",
		body: closed([]string{"phone"}, map[string]any{"phone": typ("string", "description", "The phone number of the WhatsApp account, in E.164 form.")}), data: obj([]string{"code"}, map[string]any{"code": str}), errs: eng},

	{method: "POST", path: "/v1/sandbox/group-changes", id: "simulateGroupChange", tag: tagSandbox, summary: "Make the sandbox engine report a group change", scope: "admin", body: bodyOf(groupChangeBody{}), status: 202,
		data: obj([]string{"accepted"}, map[string]any{"accepted": boolean})},
}

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// docPath is the document's template for a routed path: /v1/messages/{chatId}
// and /v1/scheduled-messages/{chatId} share their template with a GET by id, so
// their parameter is named id there too.
func docPath(p string) string {
	switch p {
	case "/v1/messages/{chatId}", "/v1/scheduled-messages/{chatId}":
		return strings.Replace(p, "{chatId}", "{id}", 1)
	}
	return p
}

var errorDesc = map[int]string{
	400: "The request is malformed: a bad parameter, query value or JSON body.",
	401: "The API key is missing, malformed or revoked.",
	403: "The API key lacks the scope of the operation.",
	404: "The resource does not exist in the workspace.",
	409: "The resource is in a state that forbids the operation.",
	413: "The request body is too large.",
	415: "The request body is not JSON.",
	422: "The request body is well formed but breaks a rule.",
	429: "Too many requests for the API key.",
	500: "An unexpected failure.",
	501: "The feature is not configured on this server.",
	503: "No engine or dependency can serve the request now; retry later.",
	504: "The engine did not answer in time.",
}

func buildOpenAPI() map[string]any {
	paths := map[string]any{}
	tags := map[string]bool{}
	for _, o := range apiOperations {
		path := docPath(o.path)
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		tags[o.tag] = true
		op := map[string]any{"operationId": o.id, "summary": o.summary, "tags": []string{o.tag}}
		var params []any
		for _, m := range pathParamRE.FindAllStringSubmatch(path, -1) {
			desc := pathParamDesc[m[1]]
			if path != o.path && m[1] == "id" {
				desc = pathParamDesc["chatId"]
			}
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "description": desc, "schema": str})
		}
		for _, p := range o.query {
			params = append(params, map[string]any{"name": p.name, "in": "query", "required": p.required, "description": p.desc, "schema": p.schema})
		}
		if params != nil {
			op["parameters"] = params
		}
		errs := map[int]bool{401: true, 429: true, 500: true}
		if o.public {
			op["security"] = []any{}
			op["description"] = "Open without an API key."
			op["responses"] = map[string]any{"200": map[string]any{"description": "The OpenAPI 3.1 document of the API.",
				"content": map[string]any{"application/json": map[string]any{"schema": typ("object")}}}}
			item[strings.ToLower(o.method)] = op
			continue
		}
		if o.scope != "" {
			errs[403] = true
			op["security"] = []any{map[string]any{"bearerAuth": []string{o.scope}}}
			op["description"] = "Needs the " + o.scope + " scope."
		} else {
			op["description"] = "Needs any valid API key."
		}
		if params != nil {
			errs[400] = true
		}
		for _, h := range o.header {
			params = append(params, map[string]any{"name": h.name, "in": "header", "required": h.required, "description": h.desc, "schema": h.schema})
			op["parameters"] = params
		}
		if o.body != nil {
			errs[400], errs[413], errs[415], errs[422] = true, true, true, true
			content := map[string]any{"application/json": map[string]any{"schema": o.body}}
			if o.form != nil {
				content["multipart/form-data"] = map[string]any{"schema": o.form}
			}
			op["requestBody"] = map[string]any{"required": !o.bodyOptional, "content": content}
		}
		for _, s := range o.errs {
			errs[s] = true
		}
		resp := map[string]any{}
		status := o.status
		if status == 0 {
			status = 200
		}
		if o.data == nil {
			resp[itoa(status)] = map[string]any{"description": "Done; no body."}
		} else {
			env := obj([]string{"success", "data"}, map[string]any{"success": typ("boolean", "const", true), "data": o.data})
			desc := "The resource."
			if o.list {
				env = obj([]string{"success", "data", "limit", "skip", "total"}, map[string]any{
					"success": typ("boolean", "const", true), "data": arrayOf(o.data),
					"limit": integer, "skip": integer, "total": integer,
				})
				desc = "A page of records and the total matching."
			}
			content := map[string]any{"application/json": map[string]any{"schema": env}}
			for mt, schema := range o.alt {
				content[mt] = map[string]any{"schema": schema}
			}
			resp[itoa(status)] = map[string]any{"description": desc, "content": content}
		}
		if o.id == "createBoardItem" || o.id == "scheduleMessage" {
			resp["200"] = resp[itoa(status)] // an idempotent repeat answers 200
		}
		codes := make([]int, 0, len(errs))
		for s := range errs {
			codes = append(codes, s)
		}
		sort.Ints(codes)
		for _, s := range codes {
			resp[itoa(s)] = map[string]any{"$ref": "#/components/responses/E" + itoa(s)}
		}
		op["responses"] = resp
		item[strings.ToLower(o.method)] = op
	}
	schemas := map[string]any{}
	for _, m := range []map[string]any{recordSchemas, apiSchemas} {
		for k, v := range m {
			schemas[k] = v
		}
	}
	responses := map[string]any{}
	for s, d := range errorDesc {
		responses["E"+itoa(s)] = map[string]any{"description": d,
			"content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}
	}
	tagList := make([]string, 0, len(tags))
	for t := range tags {
		tagList = append(tagList, t)
	}
	sort.Strings(tagList)
	var tagObjs []any
	for _, t := range tagList {
		tagObjs = append(tagObjs, map[string]any{"name": t})
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "Switchboard API",
			"version":     "1",
			"description": "The REST API of Switchboard. Every answer is JSON: {success:true,data} on success, {success:false,error} on failure. Authenticate with an API key as a bearer token; the scope an operation needs is named on it.",
		},
		"servers":  []any{map[string]any{"url": "/"}},
		"tags":     tagObjs,
		"security": []any{map[string]any{"bearerAuth": []string{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas":   schemas,
			"responses": responses,
			"securitySchemes": map[string]any{"bearerAuth": map[string]any{
				"type": "http", "scheme": "bearer", "description": "An API key (Authorization: Bearer <key>).",
			}},
		},
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

var openAPIDoc = sync.OnceValue(func() []byte {
	b, err := json.Marshal(buildOpenAPI())
	if err != nil {
		panic(err)
	}
	return b
})

// serveOpenAPI serves the document at GET /v1/openapi.json.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(openAPIDoc())
}

// bodyOf describes the JSON object that decodeJSON reads into a value of v's type:
// its json-tagged fields and no others (unknown fields are refused). A field whose
// type decodes itself is left open.
func bodyOf(v any) map[string]any { return schemaOfType(reflect.TypeOf(v), false) }

// dataOf describes the JSON encoding/json makes of a value of v's type: fields
// without omitempty are required, and those that can be nil (pointers, slices,
// maps) may be null.
func dataOf(v any) map[string]any { return schemaOfType(reflect.TypeOf(v), true) }

var (
	timeType        = reflect.TypeOf(time.Time{})
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	marshalerType   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

func schemaOfType(t reflect.Type, resp bool) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return typ("string", "format", "date-time")
	case !resp && reflect.PointerTo(t).Implements(unmarshalerType),
		resp && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)):
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.String:
		return typ("string")
	case reflect.Bool:
		return typ("boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return typ("integer")
	case reflect.Float32, reflect.Float64:
		return typ("number")
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return typ("string", "contentEncoding", "base64")
		}
		return arrayOf(schemaOfType(t.Elem(), resp))
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOfType(t.Elem(), resp)}
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" { // an embedded struct's fields are the outer's
				inner := schemaOfType(f.Type, resp)
				for k, v := range inner["properties"].(map[string]any) {
					props[k] = v
				}
				if r, ok := inner["required"].([]string); ok {
					required = append(required, r...)
				}
				continue
			}
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fs := schemaOfType(f.Type, resp)
			omit := strings.Contains(opts, "omitempty")
			if resp && !omit {
				required = append(required, name)
				switch f.Type.Kind() {
				case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
					if tp, ok := fs["type"].(string); ok {
						fs["type"] = []string{tp, "null"}
					}
				}
			}
			props[name] = fs
		}
		out := map[string]any{"type": "object", "properties": props}
		if resp {
			sort.Strings(required)
			if required != nil {
				out["required"] = required
			}
		} else {
			out["additionalProperties"] = false
		}
		return out
	}
	return map[string]any{}
}

// recordSchemas are the named shapes rec derives from record types.
var recordSchemas = map[string]any{}

// rec names the shape of a record type among the document's schemas and refers to it.
func rec(name string, v any) map[string]any {
	recordSchemas[name] = dataOf(v)
	return ref(name)
}

// closed is obj refusing properties it does not name, as decodeJSON does.
func closed(required []string, props map[string]any) map[string]any {
	s := obj(required, props)
	s["additionalProperties"] = false
	return s
}
