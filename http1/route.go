package http1

import (
	"bytes"
	"net/http"
	"path"
	"slices"
	"strings"
)

// route is where a pattern sends its requests: a fast handler or a
// pooled one.
type route struct {
	method string // "" for any
	fast   FastHandler
	std    http.Handler
}

// routeSet is the routes of one path, one per method.
type routeSet struct {
	path   string
	routes []route
}

// router matches a request's method and path to a route: exact paths by
// map, subtrees ("/static/") longest first.
type router struct {
	exact    map[string]*routeSet
	prefixes []*routeSet // longest path first
}

// add registers a route for pattern, "[METHOD ]PATH". It panics on a
// malformed pattern or one registered twice, as http.ServeMux does.
func (rt *router) add(pattern string, r route) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	path = strings.TrimLeft(path, " ")
	if path == "" || path[0] != '/' || !validMethod(method) {
		panic("http1: malformed pattern " + pattern)
	}
	r.method = method
	var set *routeSet
	if strings.HasSuffix(path, "/") {
		i := slices.IndexFunc(rt.prefixes, func(s *routeSet) bool { return s.path == path })
		if i < 0 {
			set = &routeSet{path: path}
			rt.prefixes = append(rt.prefixes, set)
			slices.SortStableFunc(rt.prefixes, func(a, b *routeSet) int { return len(b.path) - len(a.path) })
		} else {
			set = rt.prefixes[i]
		}
	} else {
		if rt.exact == nil {
			rt.exact = make(map[string]*routeSet)
		}
		if set = rt.exact[path]; set == nil {
			set = &routeSet{path: path}
			rt.exact[path] = set
		}
	}
	for _, old := range set.routes {
		if old.method == method {
			panic("http1: pattern " + pattern + " registered twice")
		}
	}
	set.routes = append(set.routes, r)
}

func validMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		if !tchar[m[i]] {
			return false
		}
	}
	return true
}

// match returns the route for req. If no route matches, the route is nil
// and status is 0 — or 405 when the path matches only routes of other
// methods (allowed then lists them). last is the caller's cache: the set
// an exact path matched last time, looked at before the map.
func (rt *router) match(req *Request, last **routeSet) (r *route, status int, allowed string) {
	if rt.exact == nil && rt.prefixes == nil {
		return nil, 0, "" // Server.Handler's alone, paths as they came
	}
	var set *routeSet
	var path []byte
	if *last != nil && string(req.Target) == (*last).path {
		set = *last // the target is that path, with no query: the usual repeat
	} else if path = req.Path(); *last != nil && string(path) == (*last).path {
		set = *last
	} else {
		if odd(path) {
			p, clean, ok := routePath(path)
			switch {
			case !ok:
				return nil, http.StatusBadRequest, ""
			case clean != "":
				return nil, http.StatusTemporaryRedirect, rt.redirect(req, clean)
			}
			path = []byte(p)
		}
		if rt.exact != nil {
			if set = rt.exact[string(path)]; set != nil {
				*last = set
			}
		}
		if set == nil && rt.subtreeRoot(req.Method, path) {
			return nil, http.StatusTemporaryRedirect, rt.redirect(req, string(path))
		}
	}
	if set == nil {
		for _, s := range rt.prefixes {
			if len(path) >= len(s.path) && string(path[:len(s.path)]) == s.path {
				set = s
				break
			}
		}
	}
	if set == nil {
		return nil, 0, ""
	}
	if r := set.lookup(req.Method); r != nil {
		return r, 0, ""
	}
	// The most specific path has no route for the method: a subtree
	// that holds the path may have one ("GET /" for a GET of a path
	// registered for POST alone), as with http.ServeMux. If none has,
	// the answer is 405, allowing the methods of them all.
	if path == nil {
		path = req.Path() // the target was a clean path
	}
	sets := []*routeSet{set}
	for _, s := range rt.prefixes {
		if s == set || len(path) < len(s.path) || string(path[:len(s.path)]) != s.path {
			continue
		}
		if r := s.lookup(req.Method); r != nil {
			return r, 0, ""
		}
		sets = append(sets, s)
	}
	return nil, http.StatusMethodNotAllowed, allowedMethods(sets)
}

// lookup finds the route for method: its own, GET's for HEAD, or the one
// for any method; nil if there is none.
func (s *routeSet) lookup(method []byte) *route {
	var other *route
	for i := range s.routes {
		r := &s.routes[i]
		switch {
		case r.method == string(method):
			return r
		case r.method == "GET" && string(method) == "HEAD":
			other = r
		case r.method == "" && other == nil:
			other = r
		}
	}
	return other
}

// allowedMethods lists the methods of the routes of sets, for an Allow field.
func allowedMethods(sets []*routeSet) string {
	var methods []string
	for _, s := range sets {
		for _, r := range s.routes {
			methods = append(methods, r.method)
			if r.method == "GET" {
				methods = append(methods, "HEAD")
			}
		}
	}
	slices.Sort(methods)
	return strings.Join(slices.Compact(methods), ", ")
}

// odd reports whether a path may not be routed as it is: it has a
// percent-escape, or may not be clean ("//", "." or ".." segments).
func odd(path []byte) bool {
	return len(path) > 0 && path[0] == '/' &&
		(bytes.IndexByte(path, '%') >= 0 || bytes.Contains(path, []byte("//")) || bytes.Contains(path, []byte("/.")))
}

// routePath returns the path an odd one is routed by, as http.ServeMux
// routes it: percent-decoded but for escaped slashes, which stay within
// their segment; and, if raw is not clean, its clean form, to which the
// request is redirected, as ServeMux redirects it, so that a path spelt
// otherwise cannot reach a route other than the one its handler's
// URL.Path names. ok is false for a malformed escape, which net/http's
// server refuses (400).
func routePath(raw []byte) (path, clean string, ok bool) {
	if path, ok = unescapeRoute(raw); !ok {
		return "", "", false
	}
	if c := cleanPath(string(raw)); c != string(raw) {
		return path, c, true
	}
	return path, "", true
}

// subtreeRoot reports whether path names, without its trailing slash,
// a subtree with a route for method: such a request is redirected to
// the subtree ("/static" to "/static/"), as http.ServeMux redirects it.
func (rt *router) subtreeRoot(method, path []byte) bool {
	if len(path) == 0 || path[len(path)-1] == '/' {
		return false
	}
	for _, s := range rt.prefixes {
		if len(s.path) == len(path)+1 && s.path[:len(path)] == string(path) {
			return s.lookup(method) != nil
		}
	}
	return false
}

// redirect returns the Location of a redirect of req to path (escaped as
// sent), the subtree's root if path names one without its slash, and the
// request's query.
func (rt *router) redirect(req *Request, path string) string {
	if p, ok := unescapeRoute([]byte(path)); ok && rt.exact[p] == nil && rt.subtreeRoot(req.Method, []byte(p)) {
		path += "/"
	}
	if q := req.Query(); len(q) > 0 {
		path += "?" + string(q)
	}
	return path
}

// unescapeRoute percent-decodes p but for "%2F", which stays as it is; it
// reports false for a malformed escape.
func unescapeRoute(p []byte) (string, bool) {
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b = append(b, p[i])
			continue
		}
		if i+2 >= len(p) || hexValue[p[i+1]] > 15 || hexValue[p[i+2]] > 15 {
			return "", false
		}
		if c := hexValue[p[i+1]]<<4 | hexValue[p[i+2]]; c == '/' {
			b = append(b, p[i:i+3]...)
		} else {
			b = append(b, c)
		}
		i += 2
	}
	return string(b), true
}

// cleanPath is p without empty, "." and ".." segments, with a trailing
// slash if p has one, as http.ServeMux cleans a path (escaped: "%2e%2e"
// is not a ".." segment).
func cleanPath(p string) string {
	clean := path.Clean(p)
	if p[len(p)-1] == '/' && clean != "/" {
		clean += "/"
	}
	return clean
}
