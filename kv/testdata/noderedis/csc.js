// node-redis with its client-side cache (RESP3, CLIENT TRACKING) against
// the server at the address in argv[2]: prints, as JSON, what the caching
// client read at each step and how many GETs reached the server by then,
// which tells the reads the cache answered from those it did not.
const { createClient } = require('redis');

async function main() {
  const url = 'redis://' + process.argv[2];
  const plain = createClient({ url });
  const cached = createClient({ url, RESP: 3, clientSideCache: { ttl: 0, maxEntries: 0 } });
  for (const c of [plain, cached]) {
    c.on('error', (e) => { console.log(JSON.stringify({ error: e.message })); process.exit(1); });
    await c.connect();
  }
  const gets = async () => {
    const info = await plain.info('commandstats');
    const m = /cmdstat_get:calls=(\d+)/.exec(info);
    return m ? Number(m[1]) : 0;
  };
  const settle = () => new Promise((r) => setTimeout(r, 100));
  const steps = [];
  const step = async (name) => {
    const value = await cached.get('k');
    steps.push({ name, value, gets: await gets() });
  };
  await plain.set('k', 'v1');
  await step('first');
  await step('again');
  await plain.set('k', 'v2');
  await settle();
  await step('changed');
  await step('changed again');
  await plain.del('k');
  await settle();
  await step('deleted');
  await plain.set('k', 'v3');
  await plain.flushAll();
  await settle();
  await step('flushed');
  console.log(JSON.stringify({ steps }));
  await cached.quit();
  await plain.quit();
}

main().catch((e) => { console.log(JSON.stringify({ error: String(e) })); process.exit(1); });
