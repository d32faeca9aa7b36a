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
	f.Fuzz(func(t *testing.T, b []byte) {
		keys := firstKeys(b, make([][]byte, 0, warmBatch))
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
