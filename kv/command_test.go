package kv

import (
	"slices"
	"testing"

	"github.com/evloop/evloop/resp"
)

// TestCompatCommandFlagOrder: COMMAND lists each command's flags and ACL
// categories in Redis 7.0's order, flags as addReplyFlagsForCommand and
// categories as ACLCommandCategories list them, and hides may_replicate
// (PUBLISH's, PFCOUNT's), as Redis hides it. Of the flags and categories
// of each command, only those both servers give are compared.
func TestCompatCommandFlagOrder(t *testing.T) {
	// info returns each command's (and subcommand's) flags and categories.
	info := func(addr string) map[string][2][]string {
		v, _, err := resp.Parse([]byte(dialRaw(t, addr).do("COMMAND")))
		if err != nil {
			t.Fatalf("COMMAND: %v", err)
		}
		out := map[string][2][]string{}
		var walk func(cmds []resp.Value)
		walk = func(cmds []resp.Value) {
			for _, c := range cmds {
				if len(c.Elems) < 10 {
					t.Fatalf("COMMAND entry %v", c)
				}
				var lists [2][]string
				for i, e := range []resp.Value{c.Elems[2], c.Elems[6]} {
					for _, x := range e.Elems {
						lists[i] = append(lists[i], string(x.Str))
					}
				}
				out[string(c.Elems[0].Str)] = lists
				walk(c.Elems[9].Elems)
			}
		}
		walk(v.Elems)
		return out
	}
	_, addr := startServer(t, Config{})
	ours, theirs := info(addr), info(redisServer(t))
	if flags := ours["publish"][0]; slices.Contains(flags, "may_replicate") {
		t.Errorf("COMMAND INFO publish flags %q; want may_replicate hidden", flags)
	}
	both := func(a, b []string) []string {
		var out []string
		for _, x := range a {
			if slices.Contains(b, x) {
				out = append(out, x)
			}
		}
		return out
	}
	compared := 0
	for name, got := range ours {
		want, ok := theirs[name]
		if !ok {
			continue
		}
		compared++
		for i, what := range []string{"flags", "categories"} {
			if g, w := both(got[i], want[i]), both(want[i], got[i]); !slices.Equal(g, w) {
				t.Errorf("COMMAND INFO %s %s: evkv %q; Redis %q", name, what, got[i], want[i])
			}
		}
	}
	if compared < 200 {
		t.Errorf("compared %d commands; want all of evkv's", compared)
	}
}
