// graphql-js's own introspection query against the gateway, over HTTP and
// over graphql-ws, for node_test.go. Usage: node introspect.js <http url> <ws url>
// It builds a client schema from each answer, prints the HTTP one in SDL,
// and exits 1 if the two differ or either fails.
const WebSocket = require("ws");
const { getIntrospectionQuery, buildClientSchema, printSchema } = require("graphql");
const { createClient } = require("graphql-ws");
const [httpURL, wsURL] = process.argv.slice(2);
setTimeout(() => { console.error("timed out"); process.exit(3); }, 15000);
const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true });

async function main() {
  const res = await fetch(httpURL, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ query }) });
  const body = await res.json();
  if (body.errors) throw new Error("HTTP: " + JSON.stringify(body.errors));
  const viaHTTP = printSchema(buildClientSchema(body.data));
  const client = createClient({ url: wsURL, webSocketImpl: WebSocket, retryAttempts: 0 });
  const viaWS = await new Promise((resolve, reject) => {
    let result;
    client.subscribe({ query }, {
      next: (v) => { result = v; },
      error: (e) => reject(new Error("ws: " + JSON.stringify(e, Object.getOwnPropertyNames(e || {})))),
      complete: () => resolve(result),
    });
  });
  await client.dispose();
  if (viaWS.errors) throw new Error("ws: " + JSON.stringify(viaWS.errors));
  if (printSchema(buildClientSchema(viaWS.data)) !== viaHTTP) throw new Error("the schemas over HTTP and WebSocket differ");
  console.log(viaHTTP);
}
main().then(() => process.exit(0), (e) => { console.error(e.stack || e); process.exit(1); });
