package switchboard

// LinkPreview is the card attached to a message whose text contains a URL.
type LinkPreview struct {
	Title        string `json:"title,omitempty"`
	Description  string `json:"description,omitempty"`
	CanonicalURL string `json:"canonicalUrl,omitempty"`
	Thumbnail    string `json:"thumbnail,omitempty"`
}
