package kv

import (
	"slices"
	"strconv"

	"github.com/evloop/evloop/resp"
)

// setMaxIntset is Redis 7.0's set-max-intset-entries: a set of at most
// this many integers is an "intset".
const setMaxIntset = 512

// setRewriteBatch is how many members each SADD of a log rewrite adds.
const setRewriteBatch = 64

// set is a set value: its members in a dict. Redis keeps a set of
// integers as a sorted array (an intset) until it holds a member that is
// not an integer or more than setMaxIntset members, then as a hash table
// for good. OBJECT ENCODING shows which, and an intset's members come out
// in numeric order: intset tracks that state and the walks sort by it.
type set struct {
	members *dict[struct{}]
	intset  bool
}

// newSet returns an empty set; as Redis creates it for its first member,
// an intset if that member is an integer.
func newSet(first []byte) *set {
	_, isInt := setInt(first)
	return &set{members: newDict[struct{}](0), intset: isInt}
}

// setInt reports whether m is an integer as Redis's intset takes one (a
// canonical decimal int64: no sign but '-', no leading zeros, no "-0").
func setInt(m []byte) (int64, bool) {
	if len(m) == 0 || len(m) > 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(m), 10, 64)
	if err != nil || m[0] == '+' || (m[0] == '0' && len(m) > 1) || (m[0] == '-' && (len(m) == 1 || m[1] == '0')) {
		return 0, false
	}
	return v, true
}

func (o *set) len() int { return o.members.len() }

func (o *set) has(m []byte) bool { return o.members.get(m) != nil }

// add adds m and reports whether it was new.
func (o *set) add(m []byte) bool {
	if _, added := o.members.put(m); !added {
		return false
	}
	if o.intset {
		if _, isInt := setInt(m); !isInt || o.members.len() > setMaxIntset {
			o.intset = false
		}
	}
	return true
}

// remove removes m and reports whether it was there.
func (o *set) remove(m []byte) bool { return o.members.delete(m) }

// list returns the members in the order Redis walks them: numeric for an
// intset, the dict's order otherwise.
func (o *set) list() []string {
	out := make([]string, o.members.len())
	for i := range out {
		out[i], _ = o.members.at(i)
	}
	if o.intset {
		slices.SortFunc(out, func(a, b string) int {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return cmpInt(x, y)
		})
	}
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// random returns a random member.
func (o *set) random() string {
	m, _ := o.members.at(o.members.random())
	return m
}

func (o *set) encoding() string {
	if o.intset {
		return "intset"
	}
	return "hashtable"
}

func (o *set) clone() *set {
	c := &set{members: newDict[struct{}](o.members.len()), intset: o.intset}
	for i := range o.members.len() {
		m, _ := o.members.at(i)
		c.members.put([]byte(m))
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
