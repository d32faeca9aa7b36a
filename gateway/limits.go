package gateway

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Default bounds of a document, as Cosmo Router's parser limits have them
// (total_fields_limit, approximate_depth_limit): GraphiQL's introspection
// query writes about 70 fields, 15 deep.
const (
	defaultMaxFields = 500
	defaultMaxDepth  = 100
)

// checkLimits refuses a document that writes more than maxFields fields
// in all, nests fields or inline fragments more than maxDepth deep
// (fragments' where they are spread), or would cost the validation more
// than maxFields² comparisons of fields. It runs between the parse and the
// validation, whose check that fields can be merged compares the fields
// each selection gathers (its inline fragments' among them, and those of
// the fragments it spreads) pairwise, at each selection, for each
// operation: 20,000 fields in a 60 KB message took a worker 43 s, and
// 500 fields under a few thousand nested inline fragments, or a fragment
// of 500 spread by a few thousand operations, would take minutes. The
// cost counted is the sum of the squares of what each selection gathers,
// each fragment's selections counted once for each operation that
// reaches it and once on their own; two fragments are compared once in
// the whole validation, so a fragment spreading fragments adds only its
// own fields where it is spread. A selection of maxFields fields alone is
// within it.
func checkLimits(doc *ast.QueryDocument, maxFields, maxDepth int) *gqlerror.Error {
	w := costWalk{fragments: map[string]*fragmentCost{}, budget: int64(maxFields) * int64(maxFields)}
	for _, f := range doc.Fragments {
		w.fragments[f.Name] = &fragmentCost{def: f}
	}
	depth := 0
	for _, op := range doc.Operations {
		w.seen = map[*fragmentCost]bool{} // spreads add their fragments' costs (spend)
		c := w.gather(op.SelectionSet)
		w.add(c.cost)
		w.fields += c.written
		depth = max(depth, c.depth)
	}
	w.seen = nil
	for _, f := range doc.Fragments {
		c := w.fragment(w.fragments[f.Name])
		w.add(c.cost)
		w.fields += c.written
	}
	switch {
	case w.fields > maxFields:
		return gqlerror.Errorf("The document has %d fields, past this gateway's limit of %d.", w.fields, maxFields)
	case depth > maxDepth:
		return gqlerror.Errorf("The document nests fields %d deep, fragments where they are spread, past this gateway's limit of %d.", depth, maxDepth)
	case w.total > w.budget:
		return gqlerror.Errorf("The document's fields would take %d comparisons to validate, past this gateway's limit of %d (%d fields in one selection).", w.total, w.budget, maxFields)
	}
	return nil
}

// costWalk counts a document's fields, finds how deep they nest, and adds
// up the validation's cost, each fragment's found once.
type costWalk struct {
	fragments map[string]*fragmentCost
	seen      map[*fragmentCost]bool // the fragments whose cost this operation counted
	current   *fragmentCost          // the fragment being gathered, if any
	fields    int                    // written in operations (fragments' counted on their own)
	total     int64                  // the cost, saturating at maxCost
	budget    int64
}

// selectionCost is what a selection set comes to.
type selectionCost struct {
	own     int // its fields and its inline fragments': compared pairwise at it
	spread  int // the own fields of the fragments it spreads: compared with those
	written int // fields written in it, spread fragments' left out
	depth   int
	cost    int64 // its comparisons and those of the selections within it, fragments' left out
}

// fragmentCost is a fragment's selectionCost, found when first needed.
type fragmentCost struct {
	def           *ast.FragmentDefinition
	walking, done bool
	c             selectionCost
	spreads       []*fragmentCost // the fragments it spreads
}

// maxCost stands for a cost past any budget: costs stop growing there.
// (int64, and the fields squared at most 2^20 each, for 32-bit systems.)
const maxCost int64 = 1 << 40

func (w *costWalk) add(c int64) { w.total = min(w.total+c, maxCost) }

// gather returns what set comes to; within an operation (seen is set), it
// adds the cost of the fragments set spreads that the operation had not
// counted yet.
func (w *costWalk) gather(set ast.SelectionSet) selectionCost {
	var c selectionCost
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			sub := w.gather(s.SelectionSet)
			c.own++
			c.written += 1 + sub.written
			c.depth = max(c.depth, 1+sub.depth)
			c.cost = min(c.cost+sub.cost, maxCost)
		case *ast.InlineFragment:
			sub := w.gather(s.SelectionSet)
			c.own += sub.own
			c.spread += sub.spread
			c.written += sub.written
			c.depth = max(c.depth, 1+sub.depth)
			c.cost = min(c.cost+sub.cost, maxCost)
		case *ast.FragmentSpread:
			f := w.fragments[s.Name]
			if f == nil || f.walking {
				continue // unknown, or a cycle: the validation refuses either
			}
			fc := w.fragment(f)
			if w.current != nil {
				w.current.spreads = append(w.current.spreads, f)
			}
			if w.seen != nil {
				w.spend(f)
			}
			// Its spreads are compared apart, each pair of fragments once
			// in the whole validation.
			c.spread += fc.own
			c.depth = max(c.depth, fc.depth)
		}
	}
	n := int64(min(c.own+c.spread, 1<<20))
	c.cost = min(c.cost+n*n, maxCost)
	return c
}

// fragment returns what f's selection set comes to, found once.
func (w *costWalk) fragment(f *fragmentCost) selectionCost {
	if !f.done {
		f.walking = true
		seen, current := w.seen, w.current
		w.seen, w.current = nil, f // its spreads' costs are the operations' to count
		f.c = w.gather(f.def.SelectionSet)
		w.seen, w.current = seen, current
		f.walking, f.done = false, true
	}
	return f.c
}

// spend adds the cost of f, and of the fragments it spreads, to the
// operation's, unless the operation counted them already: the validation
// walks a fragment once for each operation that reaches it.
func (w *costWalk) spend(f *fragmentCost) {
	if w.seen[f] {
		return
	}
	w.seen[f] = true
	w.add(f.c.cost)
	for _, g := range f.spreads {
		w.spend(g)
	}
}
