package kv

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/evloop/evloop/internal/testpeer"
)

// node-redis's client-side cache (RESP3 and CLIENT TRACKING) against
// evkv: a value read once is answered from the cache until evkv says it
// changed (SET), went (DEL) or everything did (FLUSHALL), and then read
// from the server again (testdata/noderedis/csc.js, which counts the GETs
// that reach the server).
func TestNodeRedisClientSideCache(t *testing.T) {
	modules := testpeer.NodeModules(t, "redis@6")
	_, addr := startServer(t, Config{})
	cmd := exec.Command("node", filepath.Join("testdata", "noderedis", "csc.js"), addr)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.CombinedOutput()
	var got struct {
		Error string
		Steps []struct {
			Name  string
			Value *string
			Gets  int
		}
	}
	if jerr := json.Unmarshal(out, &got); jerr != nil || err != nil || got.Error != "" {
		t.Fatalf("node: %v, %v: %s", err, jerr, out)
	}
	want := []struct {
		name  string
		value string // "" for none
		gets  int    // GETs the server saw since the first
	}{
		{"first", "v1", 0},
		{"again", "v1", 0},
		{"changed", "v2", 1},
		{"changed again", "v2", 1},
		{"deleted", "", 2},
		{"flushed", "", 3},
	}
	if len(got.Steps) != len(want) {
		t.Fatalf("node printed %s", out)
	}
	for i, w := range want {
		g := got.Steps[i]
		v := ""
		if g.Value != nil {
			v = *g.Value
		}
		if g.Name != w.name || v != w.value || g.Gets-got.Steps[0].Gets != w.gets {
			t.Errorf("step %q: read %q with %d GETs at the server since the first; want %q with %d", g.Name, v, g.Gets-got.Steps[0].Gets, w.value, w.gets)
		}
	}
}
