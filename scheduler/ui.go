package scheduler

import (
	"embed"
	"io/fs"
	"net/http"
)

// The web UI: plain HTML, CSS and JavaScript embedded in the binary (no
// build step, nothing fetched from elsewhere). The page reads the same
// REST API as any client; it has no routes of its own beyond its files.

//go:embed ui
var uiFiles embed.FS

func (s *Scheduler) uiRoutes(mux *http.ServeMux) {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	files := http.FileServerFS(sub)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, sub, "index.html")
	})
	mux.Handle("GET /ui/", http.StripPrefix("/ui/", files))
}
