package ws_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/ws"
)

// An opening handshake's fields as clients write them: odd case and extra
// tokens in Upgrade and Connection, lists of versions, keys that are not
// 16 bytes in base64, subprotocol lists, permessage-deflate offers (RFC
// 7692 section 7.1: a server declines an offer with an unknown or
// duplicated parameter or a bad value, and falls back to the next offer).
// Each is answered with the status, subprotocol and extension answer
// RFC 6455 and RFC 7692 prescribe, by both upgrades.
func TestUpgradeFields(t *testing.T) {
	addr := serve(t, &echo{}, &ws.Options{Compression: true, Subprotocols: []string{"b", "a"}})
	const (
		key     = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		version = "Sec-WebSocket-Version: 13\r\n"
		fields  = "Upgrade: websocket\r\nConnection: Upgrade\r\n" + version + key
		window  = noTakeover + "; server_max_window_bits=15"
	)
	offer := func(v string) string { return fields + "Sec-WebSocket-Extensions: " + v + "\r\n" }
	for _, tc := range []struct {
		name     string
		fields   string
		status   int
		protocol string
		answer   string
	}{
		{"keep-alive, Upgrade", "Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n" + version + key, 101, "", ""},
		{"lower and upper case", "upgrade: WebSocket\r\nconnection: UPGRADE\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n", 101, "", ""},
		{"more upgrade tokens", "Upgrade: h2c, websocket\r\nConnection: Upgrade,HTTP2-Settings\r\n" + version + key, 101, "", ""},
		{"websocket/13 is another protocol", "Upgrade: websocket/13\r\nConnection: Upgrade\r\n" + version + key, 400, "", ""},
		{"versions 13, 8", "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13, 8\r\n" + key, 426, "", ""},
		{"versions 8, 13", "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8, 13\r\n" + key, 426, "", ""},
		{"key without padding", "Upgrade: websocket\r\nConnection: Upgrade\r\n" + version + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ\r\n", 400, "", ""},
		{"key of 15 bytes", "Upgrade: websocket\r\nConnection: Upgrade\r\n" + version + "Sec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4P\r\n", 400, "", ""},
		{"key of 18 bytes", "Upgrade: websocket\r\nConnection: Upgrade\r\n" + version + "Sec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEBES\r\n", 400, "", ""},
		{"key not base64", "Upgrade: websocket\r\nConnection: Upgrade\r\n" + version + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ!=\r\n", 400, "", ""},
		{"empty key", "Upgrade: websocket\r\nConnection: Upgrade\r\n" + version + "Sec-WebSocket-Key:\r\n", 400, "", ""},

		{"subprotocols with spaces and empty elements", fields + "Sec-WebSocket-Protocol: x , a,,b\r\n", 101, "b", ""},
		{"subprotocols in two fields", fields + "Sec-WebSocket-Protocol: x\r\nSec-WebSocket-Protocol: c, a\r\n", 101, "a", ""},
		{"subprotocols are case-sensitive", fields + "Sec-WebSocket-Protocol: A, B\r\n", 101, "", ""},

		{"deflate", offer("permessage-deflate"), 101, "", noTakeover},
		{"client_max_window_bits", offer("permessage-deflate; client_max_window_bits"), 101, "", noTakeover},
		{"client_max_window_bits=8", offer("permessage-deflate; client_max_window_bits=8"), 101, "", noTakeover},
		{"client_max_window_bits quoted", offer(`permessage-deflate; client_max_window_bits="9"`), 101, "", noTakeover},
		{"both no_context_takeover", offer("permessage-deflate; server_no_context_takeover; client_no_context_takeover"), 101, "", noTakeover},
		{"server_max_window_bits=15", offer("permessage-deflate; server_max_window_bits=15"), 101, "", window},
		{"server_max_window_bits=15 quoted", offer(`permessage-deflate; server_max_window_bits="15"`), 101, "", window},
		{"server_max_window_bits with a quoted pair", offer(`permessage-deflate; server_max_window_bits="1\5"`), 101, "", window},
		{"server_max_window_bits=8", offer("permessage-deflate; server_max_window_bits=8"), 101, "", noTakeover + "; server_max_window_bits=8"},
		{"server_max_window_bits=14", offer("permessage-deflate; server_max_window_bits=14"), 101, "", noTakeover + "; server_max_window_bits=14"},
		{"server_max_window_bits=16", offer("permessage-deflate; server_max_window_bits=16"), 101, "", ""},
		{"server_max_window_bits with a leading zero", offer("permessage-deflate; server_max_window_bits=015"), 101, "", ""},
		{"server_max_window_bits unterminated", offer(`permessage-deflate; server_max_window_bits="15`), 101, "", ""},
		{"server_max_window_bits quoted twice", offer(`permessage-deflate; server_max_window_bits=""15""`), 101, "", ""},
		{"client_max_window_bits=7", offer("permessage-deflate; client_max_window_bits=7"), 101, "", ""},
		{"client_max_window_bits=16", offer("permessage-deflate; client_max_window_bits=16"), 101, "", ""},
		{"client_max_window_bits empty", offer("permessage-deflate; client_max_window_bits="), 101, "", ""},
		{"client_max_window_bits unterminated", offer(`permessage-deflate; client_max_window_bits="10`), 101, "", ""},
		{"a value for no_context_takeover", offer("permessage-deflate; client_no_context_takeover=true"), 101, "", ""},
		{"a parameter twice", offer("permessage-deflate; server_no_context_takeover; server_no_context_takeover"), 101, "", ""},
		{"a window twice", offer("permessage-deflate; server_max_window_bits=15; server_max_window_bits=15"), 101, "", ""},
		{"an unknown parameter", offer("permessage-deflate; mode=fast"), 101, "", ""},
		{"an empty parameter", offer("permessage-deflate;"), 101, "", ""},
		{"fallback to the next offer", offer("permessage-deflate; server_max_window_bits=16, permessage-deflate; client_max_window_bits"), 101, "", noTakeover},
		{"fallback past an unknown parameter", offer("permessage-deflate; x, permessage-deflate; server_max_window_bits=15"), 101, "", window},
		{"fallback to the next field", fields + "Sec-WebSocket-Extensions: permessage-deflate; x\r\nSec-WebSocket-Extensions: permessage-deflate\r\n", 101, "", noTakeover},
		{"other extensions first", offer(`x-webkit-deflate-frame, foo; a="b,c", permessage-deflate`), 101, "", noTakeover},
		{"no offer accepted", offer("permessage-deflate; server_max_window_bits=7, permessage-deflate; y"), 101, "", ""},
	} {
		for _, path := range []string{"/fast", "/std"} {
			t.Run(tc.name+path, func(t *testing.T) {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(5 * time.Second))
				io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n"+tc.fields+"\r\n")
				resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
				if err != nil {
					t.Fatalf("reading the answer: %v", err)
				}
				h := resp.Header
				if resp.StatusCode != tc.status || h.Get("Sec-WebSocket-Protocol") != tc.protocol || h.Get("Sec-WebSocket-Extensions") != tc.answer {
					t.Fatalf("answered %d, subprotocol %q, extensions %q; want %d, %q, %q",
						resp.StatusCode, h.Get("Sec-WebSocket-Protocol"), h.Get("Sec-WebSocket-Extensions"), tc.status, tc.protocol, tc.answer)
				}
			})
		}
	}
}

// The Dialer's checks of a server's permessage-deflate answer to its
// offer, "permessage-deflate; server_no_context_takeover;
// client_no_context_takeover" (RFC 7692 section 7.1): a window the
// server keeps to is taken, offered or not; a parameter that was not
// offered, unknown, given twice or with a bad value fails the connection.
func TestDialDeflateAnswers(t *testing.T) {
	d := newDialer(t)
	for _, tc := range []struct {
		answer string
		reason string // why Dial fails; "" if it succeeds
	}{
		{noTakeover, ""},
		{"permessage-deflate; server_no_context_takeover", ""},
		{"Permessage-Deflate; Server_No_Context_Takeover", ""},
		{noTakeover + "; server_max_window_bits=8", ""},
		{noTakeover + "; server_max_window_bits=15", ""},
		{noTakeover + `; server_max_window_bits="12"`, ""},
		{noTakeover + "; server_max_window_bits=7", "invalid server_max_window_bits"},
		{noTakeover + "; server_max_window_bits=16", "invalid server_max_window_bits"},
		{noTakeover + "; server_max_window_bits=08", "invalid server_max_window_bits"},
		{noTakeover + "; server_max_window_bits", "invalid server_max_window_bits"},
		{noTakeover + `; server_max_window_bits="12`, "invalid server_max_window_bits"},
		{noTakeover + "; server_max_window_bits=10; server_max_window_bits=10", "server_max_window_bits twice"},
		{noTakeover + "; client_max_window_bits=15", "client_max_window_bits, which was not offered"},
		{noTakeover + "; client_max_window_bits", "client_max_window_bits, which was not offered"},
		{noTakeover + "; server_no_context_takeover", "server_no_context_takeover twice"},
		{"permessage-deflate; server_no_context_takeover=1", "a value for server_no_context_takeover"},
		{noTakeover + "; mode=fast", `unknown parameter "mode"`},
		{"permessage-deflate; client_no_context_takeover", "without server_no_context_takeover"},
		{noTakeover + ", x-webkit-deflate-frame", `extension "x-webkit-deflate-frame", which was not offered`},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
				io.WriteString(nc, answer101(req, "Sec-WebSocket-Extensions: "+tc.answer+"\r\n"))
				closeFrom(br)
			})
			r := newRecorder()
			c, _, err := d.Dial(context.Background(), "ws://"+addr+"/", nil, r, &ws.Options{Compression: true})
			if tc.reason == "" {
				if err != nil || !c.Compressed() {
					t.Fatalf("Dial = %v; want a connection with permessage-deflate", err)
				}
				c.CloseAsync(ws.CloseNormal, "")
				r.closeCode(t, ws.CloseAbnormal) // the fake server hangs up without answering
				return
			}
			var herr *ws.HandshakeError
			if !errors.As(err, &herr) || !strings.Contains(herr.Reason, tc.reason) {
				t.Fatalf("Dial = %v, %v; want a *HandshakeError for %q", c, err, tc.reason)
			}
		})
	}
}
