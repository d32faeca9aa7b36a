// ioredis's scripting against the server at the address in argv[2]: a
// command defined with defineCommand (EVALSHA, falling back to EVAL when
// the script is not cached yet), the same in a pipeline, eval itself, a
// script's error reply, and the cache emptied under it. Prints, as JSON,
// what each step returned or the error it raised.
const Redis = require('ioredis');

async function main() {
  const [host, port] = process.argv[2].split(':');
  const r = new Redis({ host, port: Number(port), maxRetriesPerRequest: 0, enableOfflineQueue: true });
  r.defineCommand('incrCapped', {
    numberOfKeys: 1,
    lua: `local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n > tonumber(ARGV[2]) then return redis.error_reply('CAPPED at ' .. ARGV[2]) end
return n`,
  });
  const steps = {};
  const attempt = async (name, f) => {
    try {
      steps[name] = await f();
    } catch (e) {
      steps[name] = 'error: ' + e.message;
    }
  };
  await r.del('ctr');
  await attempt('first', () => r.incrCapped('ctr', 4, 10));
  await attempt('second', () => r.incrCapped('ctr', 4, 10));
  await attempt('capped', () => r.incrCapped('ctr', 4, 10));
  await attempt('pipeline', async () => (await r.pipeline().set('ctr', 0).incrCapped('ctr', 1, 10).incrCapped('ctr', 2, 10).exec()).map(([e, v]) => (e ? 'error: ' + e.message : v)));
  await attempt('flushed', async () => { await r.script('FLUSH'); return r.incrCapped('ctr', 1, 10); });
  await attempt('eval', () => r.eval("return {KEYS[1], ARGV[1], redis.call('PING')}", 1, 'k', 'a'));
  await attempt('cjson', () => r.eval("return cjson.encode({a = {1, 2}})", 0));
  r.disconnect();
  console.log(JSON.stringify({ steps }));
}

main().catch((e) => { console.log(JSON.stringify({ error: e.message })); process.exit(1); });
