package dashboard

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Assets returns the dashboard's pages: index.html, which every page path
// answers, and what it loads (app.js, app.css).
func Assets() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded: it is always there
	}
	return sub
}
