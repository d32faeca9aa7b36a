package kv

import (
	"math/rand/v2"
	"strconv"

	"github.com/evloop/evloop/resp"
)

// setRewriteBatch is how many members each SADD of a log rewrite adds.
const setRewriteBatch = 64

// set is a set value. Redis keeps a set of integers as a sorted array
// (an intset) until it holds a member that is not an integer or more than
// set-max-intset-entries members, then as a hash table for good; so does set: ints
// while table is nil, table from then on. OBJECT ENCODING shows
// which, and an intset's members come out in numeric order.
type set struct {
	table *dict[struct{}] // nil while the set is an intset
	ints  intset
}

// newSet returns an empty set; as Redis creates it for its first member,
// an intset if that member is an integer as an intset takes one (a
// canonical decimal int64, as parseInt reads it: no sign but '-', no
// leading zeros, no "-0").
func newSet(first []byte) *set {
	if _, isInt := parseInt(first); isInt {
		return &set{}
	}
	return &set{table: newDict[struct{}](0)}
}

func (o *set) isIntset() bool { return o.table == nil }

func (o *set) len() int {
	if o.table == nil {
		return o.ints.len()
	}
	return o.table.len()
}

func (o *set) has(m []byte) bool {
	if o.table == nil {
		v, isInt := parseInt(m)
		return isInt && o.ints.has(v)
	}
	return o.table.get(m) != nil
}

// add adds m and reports whether it was new. An intset of maxInts
// members (set-max-intset-entries) becomes a table.
func (o *set) add(m []byte, maxInts int) bool {
	if o.table == nil {
		v, isInt := parseInt(m)
		switch {
		case isInt && o.ints.len() < maxInts:
			return o.ints.add(v)
		case isInt && o.ints.has(v):
			return false
		}
		o.toTable()
	}
	_, added := o.table.put(m)
	return added
}

// toTable turns an intset into a table, for good.
func (o *set) toTable() {
	n := o.ints.len()
	o.table = newDict[struct{}](n + 1)
	var buf [20]byte
	for i := range n {
		o.table.put(strconv.AppendInt(buf[:0], o.ints.at(i), 10))
	}
	o.ints = intset{}
}

// remove removes m and reports whether it was there.
func (o *set) remove(m []byte) bool {
	if o.table == nil {
		v, isInt := parseInt(m)
		return isInt && o.ints.remove(v)
	}
	return o.table.delete(m)
}

// at returns the member at position i, 0 <= i < o.len(): for an intset
// the i-th smallest, else the dict's i-th.
func (o *set) at(i int) string {
	if o.table == nil {
		return strconv.FormatInt(o.ints.at(i), 10)
	}
	m, _ := o.table.at(i)
	return m
}

// randomIndex returns the position of a random member of a set that is
// not empty.
func (o *set) randomIndex() int {
	if o.table == nil {
		return rand.IntN(o.ints.len())
	}
	return o.table.random()
}

// list returns the members in the order Redis walks them: numeric for an
// intset, the dict's order otherwise.
func (o *set) list() []string {
	out := make([]string, o.len())
	for i := range out {
		out[i] = o.at(i)
	}
	return out
}

// random returns a random member of a set that is not empty.
func (o *set) random() string { return o.at(o.randomIndex()) }

func (o *set) encoding() string {
	if o.table == nil {
		return "intset"
	}
	return "hashtable"
}

func (o *set) clone() *set {
	if o.table == nil {
		return &set{ints: o.ints.clone()}
	}
	c := &set{table: newDict[struct{}](o.table.len())}
	for i := range o.table.len() {
		m, _ := o.table.at(i)
		c.table.put([]byte(m))
	}
	return c
}

func (o *set) rewrite(w *resp.Writer, key []byte) {
	args := make([][]byte, 0, 2+setRewriteBatch)
	list := o.list()
	for len(list) > 0 {
		n := min(len(list), setRewriteBatch)
		args = append(args[:0], []byte("SADD"), key)
		for _, m := range list[:n] {
			args = append(args, []byte(m))
		}
		w.Command(args...)
		list = list[n:]
	}
}
