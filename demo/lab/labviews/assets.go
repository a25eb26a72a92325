package labviews

import (
	"embed"

	"exactlyonce/static"
)

//go:embed lab.css lab.js
var assets embed.FS

// Assets is the lab's stylesheet and script, served under /lab/static/
// by the lab's own route: the shop's binary embeds none of the demo's.
var Assets = static.NewSet(assets, "/lab/static/")
