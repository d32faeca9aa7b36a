package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
)

// installed is the directory nodeModules installed into, removed after
// the tests.
var installed string

// nodeModules returns a node_modules directory with the GraphQL clients:
// $EVLOOP_NODE_MODULES if it has them, or one npm installs once into a
// temporary directory.
var nodeModules = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv("EVLOOP_GATEWAY_NODE_MODULES"); dir != "" {
		return dir, nil
	}
	dir, err := os.MkdirTemp("", "evgate-node-")
	if err != nil {
		return "", err
	}
	installed = dir
	return testpeer.NPMInstall(dir,
		"ws@8", "graphql@16", "graphql-ws@6", "subscriptions-transport-ws@0.11", "@apollo/client@3", "playwright-core@1")
})

// Each client, in Node, subscribes, gets the event the test publishes once
// the gateway subscribed upstream, and exits.
func TestNodeClients(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	modules, err := nodeModules()
	if err != nil {
		t.Skipf("npm install failed: %v", err)
	}
	_, src, addr := startGateway(t, func(c *Config) {
		c.Authenticate = func(p map[string]any) error {
			if p["token"] != "secret" {
				return errors.New("bad token")
			}
			return nil
		}
	})
	for i, kind := range []string{"graphql-ws", "apollo", "legacy"} {
		t.Run(kind, func(t *testing.T) {
			id := string(rune('5' + i))
			subject := "employee." + id
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "testdata/clients.js", kind, "ws://"+addr+"/graphql",
				`subscription { employeeUpdated(id: `+id+`) { __typename id name tags } }`)
			cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			lines := bufio.NewScanner(out)
			if !lines.Scan() || lines.Text() != "ready" {
				t.Fatalf("node: %q, want ready\n%s", lines.Text(), stderr.String())
			}
			waitFor(t, "the upstream subscription", func() bool { return src.Subscribers(subject) == 1 })
			publish(t, src, subject, `{"id":`+id+`,"name":"Node","tags":["a","b"]}`)
			if !lines.Scan() {
				t.Fatalf("node printed no result\n%s", stderr.String())
			}
			var got struct {
				Data struct {
					E struct {
						Typename string   `json:"__typename"`
						ID       string   `json:"id"`
						Name     string   `json:"name"`
						Tags     []string `json:"tags"`
					} `json:"employeeUpdated"`
				} `json:"data"`
			}
			if err := json.Unmarshal(lines.Bytes(), &got); err != nil {
				t.Fatalf("result %s: %v", lines.Bytes(), err)
			}
			e := got.Data.E
			if e.Typename != "Employee" && kind != "legacy" || e.ID != id || e.Name != "Node" || strings.Join(e.Tags, ",") != "a,b" {
				t.Fatalf("result = %s", lines.Bytes())
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("node: %v\n%s", err, stderr.String())
			}
		})
	}
}

// The page at "/", in headless Chromium: it subscribes, publishes with its
// mutation form, and shows its own event arrive.
func TestPageInChromium(t *testing.T) {
	browser := testpeer.Chromium()
	if browser == "" {
		t.Skip("chromium not installed")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	modules, err := nodeModules()
	if err != nil {
		t.Skipf("npm install failed: %v", err)
	}
	_, src, addr := startGateway(t, nil)
	q := url.Values{"query": {"subscription { employeeUpdated(id: 42) { id name } }"}, "autostart": {"1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "testdata/page.js", browser, "http://"+addr+"/?"+q.Encode(),
		`mutation { updateEmployee(id: 42, name: "From the page") { success } }`, "From the page")
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "subscribed" {
		cmd.Wait()
		t.Fatalf("page: %q; want subscribed\n%s", lines.Text(), stderr.String())
	}
	waitFor(t, "the page's upstream subscription", func() bool { return src.Subscribers("employee.42") == 1 })
	stdin.Write([]byte("go\n"))
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("page: %v\n%s\n%s", err, rest.String(), stderr.String())
	}
	if !strings.Contains(rest.String(), `"success":true`) || !strings.Contains(rest.String(), "From the page") {
		t.Fatalf("page output:\n%s", rest.String())
	}
}
