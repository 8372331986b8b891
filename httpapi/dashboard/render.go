package dashboard

import (
	"bytes"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/google/uuid"
)

// pages are the parsed templates: each page's file with the layout and the
// shared fragments.
type pages map[string]*template.Template

// mustParsePages parses every template at start; a broken template is a
// programming error that the handler tests catch.
func mustParsePages() pages {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	p := pages{}
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".html")
		if base == "layout" || base == "partials" {
			continue
		}
		p[base] = template.Must(template.New("layout.html").Funcs(templateFuncs).
			ParseFS(templateFS, "templates/layout.html", "templates/partials.html", name))
	}
	return p
}

// layoutView is what layout.html reads; Page is the page's own data.
type layoutView struct {
	Title  string
	Nav    string // the page's section, to mark the current link
	Viewer *viewer
	CSRF   string
	Page   any
}

// render writes page with status. The page is rendered to a buffer first,
// so a template error becomes a 500 rather than half a page.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	csrf, err := d.csrfToken(w, r)
	if err != nil {
		d.Log.Error("dashboard CSRF token", "err", err)
		http.Error(w, "Something went wrong on our side.", http.StatusInternalServerError)
		return
	}
	lv := layoutView{Title: title, Nav: page, CSRF: csrf, Page: data}
	if v := viewerFrom(r.Context()); v.UserID != uuid.Nil {
		lv.Viewer = &v
	}
	var buf bytes.Buffer
	if err := d.pages[page].Execute(&buf, lv); err != nil {
		d.Log.Error("render dashboard page", "page", page, "err", err)
		http.Error(w, "Something went wrong on our side.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	buf.WriteTo(w)
}
