package kv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/evloop/evloop/resp"
)

// FuzzFirstKeys checks that firstKeys never panics and that every key it
// finds is the second argument of the command the parser reads at that
// place, for as long as the parser reads the input as firstKeys does.
func FuzzFirstKeys(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"))
	f.Add([]byte("*2\r\n$4\r\nINCR\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("PING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$99\r\nk\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nkXY*2\r\n"))
	f.Add([]byte("*9999999999999\r\n$3\r\nGET\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$10737418240\r\nxx"))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys := firstKeys(new(resp.Parser), b, make([][]byte, 0, warmBatch))
		if len(keys) > warmBatch {
			t.Fatalf("%d keys, more than %d", len(keys), warmBatch)
		}
		var p resp.Parser
		rest := b
		for i, key := range keys {
			args, n, err := p.Command(rest)
			if err != nil {
				return // the parser is stricter: the connection ends here
			}
			if len(args) < 2 || !bytes.Equal(args[1], key) {
				t.Fatalf("command %d: firstKeys found %q, the parser %q", i, key, args)
			}
			rest = rest[n:]
		}
	})
}

// TestFirstKeys checks the keys found in bursts of commands, and where
// the scan stops.
func TestFirstKeys(t *testing.T) {
	cmd := func(args ...string) string {
		s := fmt.Sprintf("*%d\r\n", len(args))
		for _, a := range args {
			s += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
		}
		return s
	}
	many := make([]string, warmMaxArgs+1)
	for i := range many {
		many[i] = "x"
	}
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"two keys", cmd("GET", "a") + cmd("SET", "b", "1"), []string{"a", "b"}},
		{"empty key", cmd("GET", "") + cmd("GET", "b"), []string{"", "b"}},
		{"same key twice", cmd("LPUSH", "l", "1") + cmd("LPUSH", "l", "2") + cmd("GET", "c"), []string{"l"}},
		{"repeat later", cmd("GET", "a") + cmd("GET", "b") + cmd("GET", "b"), []string{"a", "b", "b"}},
		{"incomplete second", cmd("GET", "a") + cmd("GET", "b")[:10], []string{"a"}},
		// As the parser reads it, as Redis does: five bytes, two skipped.
		{"bulk shorter than said", "*2\r\n$3\r\nGET\r\n$5\r\nab\r\n" + cmd("GET", "c"), []string{"ab\r\n*"}},
		{"inline stops", cmd("GET", "a") + "GET b\r\n" + cmd("GET", "c"), []string{"a"}},
		{"array of one stops", cmd("GET", "a") + cmd("PING") + cmd("GET", "c"), []string{"a"}},
		{"too many arguments stop", cmd("GET", "a") + cmd(many...) + cmd("GET", "c"), []string{"a"}},
		{"huge length", "*2\r\n$3\r\nGET\r\n$10737418240\r\nxx", nil},
		{"huge count", "*10737418240\r\n$3\r\nGET\r\n", nil},
		{"no CRLF", "*2\n$3\nGET\n$1\na\n", nil},
	} {
		got := firstKeys(new(resp.Parser), []byte(tc.in), make([][]byte, 0, warmBatch))
		var gs []string
		for _, k := range got {
			gs = append(gs, string(k))
		}
		if fmt.Sprint(gs) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, gs, tc.want)
		}
	}
	var burst string
	for i := range warmBatch + 5 {
		burst += cmd("GET", fmt.Sprint(i))
	}
	if got := firstKeys(new(resp.Parser), []byte(burst), make([][]byte, 0, warmBatch)); len(got) != warmBatch {
		t.Errorf("a burst of %d: %d keys, want %d", warmBatch+5, len(got), warmBatch)
	}

	// The loop's read buffer holds one client's bytes, then another's: a
	// scan that stopped in a command of the first does not go on in the
	// second's.
	var p resp.Parser
	buf := make([]byte, 0, 256)
	buf = append(buf, cmd("MSET", "b", "1", "c", "2")[:20]...)
	if got := firstKeys(&p, buf, make([][]byte, 0, warmBatch)); len(got) != 0 {
		t.Fatalf("first client: got %q, want none", got)
	}
	buf = append(buf[:0], cmd("GET", "x")+cmd("GET", "y")+cmd("GET", "z")...)
	got := firstKeys(&p, buf, make([][]byte, 0, warmBatch))
	if gs := fmt.Sprintf("%s", got); gs != "[x y z]" {
		t.Errorf("second client, same buffer: got %s, want [x y z]", gs)
	}
}

// TestWarmerKeepsNothing checks that the keys and values warm looked at
// are not kept: the input is the loop's read buffer.
func TestWarmerKeepsNothing(t *testing.T) {
	d := &db{keys: newDict[entry](0)}
	for i := range 100 {
		d.keys.put([]byte(fmt.Sprint("k", i)))
	}
	var w warmer
	for _, in := range []string{
		"*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n*2\r\n$3\r\nGET\r\n$2\r\nk2\r\n",
		"*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n",
		"*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n",
	} {
		w.warm(d, []byte(in))
		for i := range w.keys {
			if w.keys[i] != nil || w.vals[i] != nil {
				t.Fatalf("after %q: key %d %q, value %p kept", in, i, w.keys[i], w.vals[i])
			}
		}
	}
}

// TestDictWarm checks what warm reports: the value of each key present
// in its home position, nil for the others, and that it changes nothing.
func TestDictWarm(t *testing.T) {
	d := newDict[int](0)
	for i := range 1000 {
		*must(d.put([]byte(fmt.Sprint("k", i)))) = i
	}
	var hashes [warmBatch]uint32
	var vals [warmBatch]*int
	keys := make([][]byte, warmBatch)
	for i := range keys {
		keys[i] = []byte(fmt.Sprint("k", i*37)) // present for i*37 < 1000
		hashes[i] = dictHash(keys[i])
	}
	d.warm(hashes[:], vals[:])
	mask := uint32(len(d.index) - 1)
	for i, k := range keys {
		want := d.get(k)
		atHome := want != nil && d.index[hashes[i]&mask]&(1<<32-1) != 0 &&
			&d.slot(int(uint32(d.index[hashes[i]&mask]))-1).val == want
		switch {
		case atHome && vals[i] != want:
			t.Errorf("%s: warm found %p, get %p", k, vals[i], want)
		case !atHome && vals[i] != nil:
			t.Errorf("%s: warm found %p for a key not at home", k, vals[i])
		}
		if want != nil && *want != i*37 {
			t.Errorf("%s = %d after warm, want %d", k, *want, i*37)
		}
	}
	if d.len() != 1000 {
		t.Errorf("len %d after warm", d.len())
	}
	small := newDict[int](0)
	small.put([]byte("a"))
	if small.warm(hashes[:1], vals[:1]) != 0 {
		t.Error("a dict without an index warmed")
	}
}

func must[V any](v V, _ bool) V { return v }
