package main

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{name: "plain", in: "# a comment\n\nport 6380\n  appendonly yes  \r\n", want: map[string]string{"port": "6380", "appendonly": "yes"}},
		{name: "quoted", in: `requirepass "my \"pass\"\x21"` + "\ndir '/data/it\\'s'\nnotify-keyspace-events \"\"\n",
			want: map[string]string{"requirepass": `my "pass"!`, "dir": "/data/it's", "notify-keyspace-events": ""}},
		{name: "name case", in: "PORT 1\n", want: map[string]string{"port": "1"}},
		{name: "later wins", in: "port 1\nport 2\n", want: map[string]string{"port": "2"}},
		{name: "bind several", in: "bind 127.0.0.1 -::1\n", want: map[string]string{"bind": "127.0.0.1 -::1"}},
		{name: "bind quoted", in: "bind \"127.0.0.2 ::1\"\n", want: map[string]string{"bind": "127.0.0.2 ::1"}},
		{name: "bind optional", in: "bind -::1 127.0.0.1\n", want: map[string]string{"bind": "-::1 127.0.0.1"}},
		{name: "bind all", in: "bind * -::*\n", want: map[string]string{"bind": "* -::*"}},
		{name: "bind empty", in: "bind \"\"\n", err: "c:1: bind names no address: evkv would listen nowhere"},
		{name: "old name then new", in: "hash-max-ziplist-entries 100\nhash-max-listpack-entries 200\n", want: map[string]string{"hash-max-listpack-entries": "200"}},
		{name: "new name then old", in: "replica-read-only no\nSlave-Read-Only yes\n", want: map[string]string{"replica-read-only": "yes"}},
		{name: "other settings", in: "port 1\nsave 900 1\nLatency-Monitor-Threshold 100\nsave \"\"\n",
			want: map[string]string{"port": "1", "latency-monitor-threshold": "100", "save": ""}},
		{name: "not a name", in: "port 1\n\"se ve\" 1\n", err: `c:2: unknown or unsupported setting "se ve"`},
		{name: "other without value", in: "daemonize\n", err: "c:1: wrong number of arguments for daemonize"},
		{name: "no value", in: "port\n", err: "c:1: wrong number of arguments for port"},
		{name: "two values", in: "requirepass a b\n", err: "c:1: wrong number of arguments for requirepass"},
		{name: "bind without address", in: "bind\n", err: "c:1: wrong number of arguments for bind"},
		{name: "unbalanced", in: "requirepass \"abc\n", err: "c:1: unbalanced quotes in configuration line"},
	} {
		got, _, err := parseConfig("c", []byte(tc.in))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: parseConfig = %v, %v; want error %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%s: parseConfig = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestParseMemory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"100", 100, true}, {"1kb", 1024, true}, {"1K", 1000, true}, {"512mb", 512 << 20, true},
		{"2GB", 2 << 30, true}, {"7b", 7, true},
		{"", 0, false}, {"mb", 0, false}, {"1.5mb", 0, false}, {"1 tb", 0, false},
		{"9999999999gb", 0, false}, {"9223372036854775807", 1<<63 - 1, true}, {"9223372036854775807k", 0, false},
	} {
		got, err := parseMemory(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParseConfig checks that parseConfig never panics, takes only names
// a setting could have, and reads back what it read when each value is
// written out quoted (but bind's, which it reads as an address list).
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("# c\nport 6380\nrequirepass \"a b\\x00\"\nbind 127.0.0.1 ::1\n"))
	f.Add([]byte("dir '/x\\'y'\r\nappendonly yes\n"))
	f.Add([]byte("port\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, lines, err := parseConfig("f", data)
		if err != nil {
			return
		}
		if len(lines) != len(got) {
			t.Fatalf("parseConfig(%q): %d settings, lines of %d", data, len(got), len(lines))
		}
		var b strings.Builder
		delete(got, "bind")
		for k, v := range got {
			if !validSettingName(k) {
				t.Fatalf("parseConfig(%q) took setting %q", data, k)
			}
			fmt.Fprintf(&b, "%s \"", k)
			for _, c := range []byte(v) {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
			b.WriteString("\"\n")
		}
		again, _, err := parseConfig("f", []byte(b.String()))
		if err != nil || !maps.Equal(again, got) {
			t.Fatalf("parseConfig(%q) = %q; written out and read again: %q, %v", data, got, again, err)
		}
	})
}

func TestBuildConfig(t *testing.T) {
	for _, tc := range []struct {
		name, value, err string
	}{
		{"port", "6380", ""},
		{"port", " 6380 ", ""},
		{"port", "6kb", `bad port "6kb": want an integer`},
		{"port", "65536", `bad port "65536": want 0 to 65535`},
		{"port", "-1", `bad port "-1": want 0 to 65535`},
		{"maxclients", "1k", `bad maxclients "1k": want an integer`},
		{"maxclients", "99999999999", `bad maxclients "99999999999": want 0 to 2147483647`},
		{"databases", "x", `bad databases "x": want an integer`},
		{"proto-max-bulk-len", "1mb", ""},
		{"proto-max-bulk-len", "1tb", `bad proto-max-bulk-len "1tb": want a size in bytes, as 512mb`},
		{"client-query-buffer-limit", "2mb", ""},
		{"client-query-buffer-limit", "lots", `bad client-query-buffer-limit "lots": want a size in bytes, as 512mb`},
		{"appendonly", "maybe", `bad appendonly "maybe": want yes or no`},
		{"appendfsync", "sometimes", `bad appendfsync "sometimes": want always, everysec or no`},
		{"port", "0", "configured to listen nowhere: port 0 is no TCP listener, and there is no unixsocket or tls-port"},
		{"unixsocketperm", "770", ""},
		{"unixsocketperm", "1777", `bad unixsocketperm "1777": want an octal mode, 0 to 777`},
		{"unixsocketperm", "9", `bad unixsocketperm "9": want an octal mode, 0 to 777`},
	} {
		values := map[string]*string{}
		for _, name := range settings {
			values[name] = new(string)
		}
		for name, v := range map[string]string{"port": "6379", "maxclients": "10000", "proto-max-bulk-len": "512mb",
			"client-query-buffer-limit": "1gb", "databases": "16", "appendonly": "no", "appendfsync": "everysec", "unixsocketperm": "0", "tls-port": "0"} {
			*values[name] = v
		}
		*values[tc.name] = tc.value
		_, err := buildConfig(values)
		if (tc.err == "") != (err == nil) || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s %q: buildConfig error %v; want %q", tc.name, tc.value, err, tc.err)
		}
	}
}
