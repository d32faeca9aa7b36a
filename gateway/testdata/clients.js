// Real GraphQL WebSocket clients against the gateway, for node_test.go.
// Usage: node clients.js <graphql-ws|apollo|legacy> <ws url> <query>
// It prints "ready" once the subscription is sent, then each result as a
// line of JSON, and exits after the first result (or 1 on an error).
const WebSocket = require("ws");
const [kind, url, query] = process.argv.slice(2);
const done = (code) => setImmediate(() => process.exit(code));
setTimeout(() => { console.error("timed out"); process.exit(3); }, 15000);

if (kind === "graphql-ws") {
  const { createClient } = require("graphql-ws");
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { token: "secret" },
    retryAttempts: 0,
    on: { connected: () => console.log("ready") },
  });
  client.subscribe({ query }, {
    next: (v) => { console.log(JSON.stringify(v)); client.dispose(); done(0); },
    error: (e) => { console.error("error", JSON.stringify(e, Object.getOwnPropertyNames(e || {}))); done(1); },
    complete: () => {},
  });
} else if (kind === "apollo") {
  // Apollo Client adds __typename to every selection set.
  const { ApolloClient, InMemoryCache, gql } = require("@apollo/client/core");
  const { GraphQLWsLink } = require("@apollo/client/link/subscriptions");
  const { createClient } = require("graphql-ws");
  const ws = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { token: "secret" },
    retryAttempts: 0,
    on: { connected: () => console.log("ready") },
  });
  const client = new ApolloClient({ link: new GraphQLWsLink(ws), cache: new InMemoryCache() });
  client.subscribe({ query: gql(query) }).subscribe({
    next: (v) => { console.log(JSON.stringify({ data: v.data })); ws.dispose(); done(0); },
    error: (e) => { console.error("error", e && e.message); done(1); },
  });
} else {
  const { SubscriptionClient } = require("subscriptions-transport-ws");
  const client = new SubscriptionClient(url, { reconnect: false, connectionParams: { token: "secret" } }, WebSocket);
  client.onConnected(() => console.log("ready"));
  client.request({ query }).subscribe({
    next: (v) => { console.log(JSON.stringify(v)); client.close(); done(0); },
    error: (e) => { console.error("error", JSON.stringify(e)); done(1); },
  });
}
