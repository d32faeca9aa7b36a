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

// needNode returns the node_modules directory with the GraphQL clients,
// skipping the test without Node or the modules.
func needNode(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	modules, err := nodeModules()
	if err != nil {
		t.Skipf("npm install failed: %v", err)
	}
	return modules
}

// nodeCommand makes a command running a script of testdata in Node with
// the modules, and the builder its standard error goes to.
func nodeCommand(ctx context.Context, modules string, args ...string) (*exec.Cmd, *strings.Builder) {
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	return cmd, stderr
}

// Each client, in Node, subscribes, gets the event the test publishes once
// the gateway subscribed upstream, and exits.
func TestNodeClients(t *testing.T) {
	modules := needNode(t)
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
			cmd, stderr := nodeCommand(ctx, modules, "testdata/clients.js", kind, "ws://"+addr+"/graphql",
				`subscription { employeeUpdated(id: `+id+`) { __typename id name tags } }`)
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
	modules := needNode(t)
	_, src, addr := startGateway(t, nil)
	q := url.Values{"query": {"subscription { employeeUpdated(id: 42) { id name } }"}, "autostart": {"1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, stderr := nodeCommand(ctx, modules, "testdata/page.js", browser, "http://"+addr+"/?"+q.Encode(),
		`mutation { updateEmployee(id: 42, name: "From the page") { success } }`, "From the page")
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

// graphql-js's introspection query, over HTTP and graphql-ws, builds a
// client schema (buildClientSchema checks every type it is given) that
// printSchema prints as the gateway's schema, less its own directives and
// the types only they use.
func TestNodeIntrospection(t *testing.T) {
	modules := needNode(t)
	_, _, addr := startGateway(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd, stderr := nodeCommand(ctx, modules, "testdata/introspect.js", "http://"+addr+"/graphql", "ws://"+addr+"/graphql")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	sdl := string(out)
	for _, want := range []string{
		"type Subscription {\n  employeeUpdated(id: ID!): Employee!\n  all: Employee!\n  filtered(ids: [Int!]!): Employee!\n}",
		"type Mutation {\n  updateEmployee(id: ID!, name: String!): edfs__PublishResult!\n}",
		"type Employee {\n  id: ID!\n  name: String!\n  tags: [String!]\n}",
		"type Query {\n  _unused: Boolean\n}",
	} {
		if !strings.Contains(sdl, want) {
			t.Errorf("the client schema has no\n%s\nIt is:\n%s", want, sdl)
		}
	}
	if strings.Contains(sdl, "edfs__natsSubscribe") || strings.Contains(sdl, "openfed__") || strings.Contains(sdl, "@key") || strings.Contains(sdl, "@defer") {
		t.Errorf("the client schema shows the gateway's own directives:\n%s", sdl)
	}
}
