package engine

// MediaChecker is an engine that can tell before a send that it cannot send
// media of a kind and content type (the gateway engine without ffmpeg cannot
// make a voice note of anything but Ogg/Opus). CheckMedia returns nil when it
// can, or cannot tell ("" content type); else an error saying why, which the
// send API answers as 422 before the message is stored.
type MediaChecker interface {
	CheckMedia(kind, contentType string) error
}
