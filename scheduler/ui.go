package scheduler

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// The web UI: plain HTML, CSS and JavaScript embedded in the binary (no
// build step, nothing fetched from elsewhere). The page reads the same
// REST API as any client; it has no routes of its own beyond its files.

//go:embed ui
var uiFiles embed.FS

// openRoute reports the requests that need no token when the cluster has
// one: health probes, and the web UI's own files (they hold no data; the
// page then asks for the token and sends it with each API call).
func openRoute(r *http.Request) bool {
	p := r.URL.Path
	return r.Method == http.MethodGet && (p == "/healthz" || p == "/" || strings.HasPrefix(p, "/ui/"))
}

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
