package http1

import (
	"net/http"
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
	var set *routeSet
	var path []byte
	if *last != nil && string(req.Target) == (*last).path {
		set = *last // the target is that path, with no query: the usual repeat
	} else if path = req.Path(); *last != nil && string(path) == (*last).path {
		set = *last
	} else if rt.exact != nil {
		if set = rt.exact[string(path)]; set != nil {
			*last = set
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
		path = req.Path()
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
