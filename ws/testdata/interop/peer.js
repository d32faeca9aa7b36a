// A peer for the interoperability tests, with the npm package ws:
//
//	node peer.js client <url> <config>  sends the messages of messages()
//	                                    to url and checks each echo
//	node peer.js server <config>        echoes, and sends the message
//	                                    "send <n>" asks for, fragmented
//
// config is JSON: {"perMessageDeflate": false or ws's options,
// "protocols": [...]}. The client prints one line of JSON with what was
// negotiated (the server's Sec-WebSocket-Extensions answer, the
// subprotocol) and how many messages and pongs came back; the server
// prints "listening <port>", then, for each connection, the offer it got.
"use strict";
const WebSocket = require("ws");

// messages returns the messages a client sends: every length boundary,
// text that compresses well, bytes that do not, runs of the same message
// (a compressor that took its context over to the next message would
// refer back into the last one), fragmented and uncompressed ones.
function messages() {
  const out = [];
  let seed = 1;
  const random = (n) => {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      b[i] = seed >>> 24;
    }
    return b;
  };
  const text = (n) => Buffer.from("héllo wörld, ".repeat(n / 14 + 1), "utf8").subarray(0, n);
  for (const n of [0, 1, 125, 126, 127, 65535, 65536, 1 << 20]) {
    const t = text(n);
    // Cut at a character's start, so that the text stays UTF-8.
    let k = n;
    while (k > 0 && (t[k - 1] & 0xc0) === 0x80) k--;
    if (k > 0 && t[k - 1] >= 0xc0) k--;
    out.push({ data: t.subarray(0, k), binary: false });
    out.push({ data: random(n), binary: true });
  }
  for (let i = 0; i < 5; i++) out.push({ data: text(4000), binary: false });
  for (let i = 0; i < 5; i++) out.push({ data: Buffer.alloc(3000, i), binary: true });
  out.push({ data: text(70000), binary: false, fragments: 7 });
  out.push({ data: random(20000), binary: true, fragments: 3 });
  out.push({ data: text(5000), binary: false, fragments: 5, compress: false });
  out.push({ data: text(5000), binary: false, compress: false });
  return out;
}

function send(ws, m) {
  const compress = m.compress !== false;
  if (!m.fragments) {
    ws.send(m.data, { binary: m.binary, compress });
    return;
  }
  // A ping between the fragments, which the peer answers in between.
  const size = Math.ceil(m.data.length / m.fragments);
  for (let i = 0; i < m.fragments; i++) {
    const fin = i === m.fragments - 1;
    ws.send(m.data.subarray(i * size, fin ? m.data.length : (i + 1) * size), { binary: m.binary, compress, fin });
    if (i === 0) ws.ping("between");
  }
}

function fail(why) {
  console.log(JSON.stringify({ error: String(why) }));
  process.exit(1);
}

function client(url, config) {
  const ws = new WebSocket(url, config.protocols || [], { perMessageDeflate: config.perMessageDeflate });
  const list = messages();
  let i = 0;
  let answer = "";
  let pongs = 0;
  ws.on("upgrade", (res) => (answer = res.headers["sec-websocket-extensions"] || ""));
  ws.on("open", () => send(ws, list[0]));
  ws.on("pong", () => pongs++);
  ws.on("message", (data, isBinary) => {
    const m = list[i];
    if (isBinary !== m.binary || !Buffer.from(data).equals(m.data)) {
      fail(`message ${i} (${m.data.length} bytes): echoed as ${data.length} bytes, binary ${isBinary}`);
    }
    if (++i < list.length) {
      send(ws, list[i]);
      return;
    }
    console.log(JSON.stringify({ answer, protocol: ws.protocol, messages: i, pongs }));
    ws.close(1000);
  });
  ws.on("unexpected-response", (req, res) => fail(`status ${res.statusCode}`));
  ws.on("close", (code) => process.exit(code === 1000 ? 0 : 2));
  ws.on("error", fail);
  setTimeout(() => fail("timed out"), 60000);
}

function server(config) {
  const wss = new WebSocket.WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    perMessageDeflate: config.perMessageDeflate,
    handleProtocols: config.protocols ? (offered) => config.protocols.find((p) => offered.has(p)) || false : undefined,
  });
  wss.on("listening", () => console.log("listening " + wss.address().port));
  wss.on("connection", (ws, req) => {
    console.log("offer " + JSON.stringify(req.headers["sec-websocket-extensions"] || ""));
    ws.on("message", (data, isBinary) => {
      const s = isBinary ? "" : data.toString();
      if (s.startsWith("send ")) {
        const [, n, fragments] = s.split(" ").map(Number);
        send(ws, { data: Buffer.alloc(n, "z"), binary: false, fragments });
        return;
      }
      ws.send(data, { binary: isBinary });
    });
    ws.on("error", (e) => console.log("error " + e.message));
  });
  process.stdin.on("end", () => process.exit(0)); // the test is over
  process.stdin.resume();
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "client") client(args[0], JSON.parse(args[1]));
else server(JSON.parse(args[0]));
