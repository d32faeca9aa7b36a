package gateway

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Default bounds of a document, as Cosmo Router's parser limits have them
// (total_fields_limit, approximate_depth_limit): GraphiQL's introspection
// query writes about 70 fields, 13 deep.
const (
	defaultMaxFields = 500
	defaultMaxDepth  = 100
)

// checkLimits refuses a document that writes more than maxFields fields
// in all, or nests them more than maxDepth deep, fragments' fields nested
// where the fragments are spread. It runs between the parse and the
// validation, whose check that fields can be merged compares a
// selection's fields pairwise: 20,000 fields in a 60 KB message took a
// worker 43 s. Fragments spread many times are not counted again: the
// validation compares two fragments once, and the gateway follows each
// spread once where it prints or projects.
func checkLimits(doc *ast.QueryDocument, maxFields, maxDepth int) *gqlerror.Error {
	l := limitWalk{fragments: map[string]*fragmentDepth{}}
	for _, f := range doc.Fragments {
		l.fragments[f.Name] = &fragmentDepth{def: f}
	}
	depth := 0
	for _, op := range doc.Operations {
		depth = max(depth, l.depth(op.SelectionSet))
	}
	for _, f := range doc.Fragments {
		l.depth(f.SelectionSet) // its fields, counted once
	}
	switch {
	case l.fields > maxFields:
		return gqlerror.Errorf("The document has %d fields, past this gateway's limit of %d.", l.fields, maxFields)
	case depth > maxDepth:
		return gqlerror.Errorf("The document nests fields %d deep, fragments where they are spread, past this gateway's limit of %d.", depth, maxDepth)
	}
	return nil
}

// limitWalk counts a document's fields, and finds how deep they nest,
// each fragment's depth found once.
type limitWalk struct {
	fragments map[string]*fragmentDepth
	fields    int
	// spread: a fragment's depth is being found from a spread, where its
	// fields are not counted (they are, once, on their own).
	spread bool
}

// fragmentDepth is a fragment's depth, found when first spread.
type fragmentDepth struct {
	def           *ast.FragmentDefinition
	walking, done bool
	depth         int
}

// depth returns how deep set's fields nest, counting them as it goes
// (unless within a fragment reached by a spread, counted on its own).
func (l *limitWalk) depth(set ast.SelectionSet) int {
	deepest := 0
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if !l.spread {
				l.fields++
			}
			deepest = max(deepest, 1+l.depth(s.SelectionSet))
		case *ast.InlineFragment:
			deepest = max(deepest, l.depth(s.SelectionSet))
		case *ast.FragmentSpread:
			fd := l.fragments[s.Name]
			if fd == nil || fd.walking {
				continue // unknown, or a cycle: the validation refuses either
			}
			if !fd.done {
				fd.walking = true
				spread := l.spread
				l.spread = true
				fd.depth = l.depth(fd.def.SelectionSet)
				l.spread = spread
				fd.walking, fd.done = false, true
			}
			deepest = max(deepest, fd.depth)
		}
	}
	return deepest
}
