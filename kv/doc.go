// Package kv is a Redis-compatible server: Redis 7.0's commands, replies,
// keyspace events and errors, tested reply for reply against Redis. Its
// keyspace, clients and every other piece of state belong to one evloop
// event loop, as Redis's belong to its one thread: commands run there one
// at a time, without locks (see Server). cmd/evkv is the program around it.
//
// # The append-only file
//
// With Config.AppendOnly, the changes of each loop iteration are written
// to the append-only file before that iteration's replies leave, and with
// appendfsync always synced too, so that an acknowledged change is in the
// file; the file is replayed at start. A write that fails (a full disk) is
// handled as Redis handles it:
//
//   - with appendfsync always, the server stops, as Redis exits: every
//     client is closed at once, without the replies that would have
//     acknowledged what the file lacks, no more are accepted, and Done is
//     closed with Err saying why;
//   - otherwise, what the file did not take is written again as the loop
//     goes on, and until a write succeeds the write commands, PING, and an
//     EXEC with a write queued are refused with "MISCONF Errors writing to
//     the AOF file: " and the system's text for the error, as Redis
//     refuses them.
//
// # Maxmemory
//
// With maxmemory set, keys are evicted before each command, as Redis's
// maxmemory-policy picks them (noeviction, allkeys-lru, volatile-lru,
// allkeys-lfu, volatile-lfu, allkeys-random, volatile-random,
// volatile-ttl, sampling maxmemory-samples keys into a pool of sixteen
// candidates, for as long as maxmemory-eviction-tenacity allows, the rest
// in later turns of the loop), and a command that may add to the memory
// used is refused with Redis's OOM error when nothing can go. An evicted
// key is logged as a DEL, sends the evicted event and is seen by the
// WATCHes on it. Under an LRU or LFU policy the RDB file keeps each key's
// idle time or access counter, as Redis's. The memory used is the Go
// heap's: its live bytes at the last collection, plus what was allocated
// since, less what the keys evicted since held (INFO's used_memory).
// Garbage counts until the collector takes it: past maxmemory, a
// collection is made before any key goes when what was allocated since
// the last may be garbage enough to matter (on the loop for a heap of up
// to 8 MiB, else on a goroutine of its own, the memory used allowed an
// eighth past maxmemory meanwhile). The process's resident memory is
// more: the collector lets the heap grow past the live data (GOGC), which
// GOMEMLIMIT bounds. OBJECT REFCOUNT tells whether a small integer is
// shared from the policy in force when it is asked, where Redis decides
// it when the value is made.
//
// # Client-side caching
//
// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO are Redis 7.0's:
// a client that reads keys hears, once, when each changes (a write, a
// deletion, an expiry, an eviction), in RESP3 push messages, or, for a
// RESP2 client, through a connection it redirects them to that subscribes
// to __redis__:invalidate. OPTIN, OPTOUT, BCAST with prefixes and NOLOOP
// work as in Redis, flushes invalidate every key, and
// tracking-table-max-keys bounds the keys remembered. Clients that cache
// (rueidis by default, node-redis's clientSideCache) work against evkv as
// against Redis; redis-py caches only with servers of 7.4 or later. One
// difference: SWAPDB invalidates every key, as a flush does, where Redis
// leaves what clients cached of the swapped databases stale.
//
// # Pausing clients
//
// CLIENT PAUSE and UNPAUSE are Redis 7.0's: for a time, every command
// (ALL) or those that may change the keyspace (WRITE: writes, PUBLISH,
// an EXEC with one of those queued) waits, with the client's later
// requests behind it, while the keyspace keeps still (expired keys read
// as absent but stay, no expiry cycle, no eviction). One difference: a
// timeout past the largest time is refused, as Redis 7.2 refuses it,
// where 7.0 wraps it round and does not pause.
//
// # Scripting
//
// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD, EXISTS and FLUSH
// are Redis 7.0's, compared reply for reply with it: Lua 5.1 scripts
// (the gopher-lua interpreter) with redis.call, pcall, error_reply,
// status_reply, sha1hex, log, setresp (RESP3 inside the script),
// set_repl and acl_check_cmd; Redis's sandbox (the globals and library
// tables read-only, an unset global an error, no os, io, print, getfenv
// or setfenv); the cjson, cmsgpack, struct and bit libraries; Redis's
// math.random sequence; the flags of a "#!lua flags=..." line (no-writes, allow-oom,
// ...) deciding, as in Redis, whether a script may run past maxmemory,
// under CLIENT PAUSE WRITE or by an _RO command. A script runs on the
// loop like any command: its commands see no other client's between
// them, block nowhere (BLPOP answers at once), and reach the append-only
// file as the commands themselves, in MULTI and EXEC when there are
// several, never as EVAL (Redis 7.0's effects replication). The monitors
// see EVAL and then its commands from "lua"; a tracking client's cache
// learns the keys its scripts read. A script that runs past
// busy-reply-threshold (5 seconds; 0 turns it off, as in Redis) makes the
// server busy, as in Redis 7.0: it runs on, and the other clients are
// served from inside it (the loop's ServeOthers, every 65,536
// instructions), answered BUSY but for the commands flagged allow_busy
// (AUTH, HELLO, MULTI, DISCARD, WATCH, UNWATCH, RESET, QUIT, SCRIPT KILL,
// SHUTDOWN NOSAVE), nothing evicted meanwhile; its caller is not read, the
// clients its writes woke are served when it ends, and what the log held
// from before it is written first. SCRIPT KILL stops a busy script that
// has not written (its caller gets "Script killed by user with SCRIPT
// KILL...", which a pcall in the script cannot keep), and SHUTDOWN NOSAVE
// stops the server as Redis exits in the middle of the script: the log
// has none of it nor of what would run after it, and its caller is closed
// without a reply. A TLS client that connects meanwhile finishes its
// handshake when the script ends. The cache of scripts is bounded as
// Redis 7.4 bounds it: of the scripts EVAL loaded, the 500 used last are
// kept, in an LRU list that EVAL and EVALSHA of one move it to the end
// of; one more evicts the one used least recently, counted by INFO's
// evicted_scripts, and EVALSHA of its digest answers NOSCRIPT (go-redis's
// Script.Run then sends EVAL). A client that writes its values into its
// scripts thus cannot grow the server without end. The scripts SCRIPT
// LOAD loaded stay until SCRIPT FLUSH, also one EVAL had loaded before
// (Valkey's rule; Redis 7.4 leaves that one on the list).
//
// The differences: Lua's own error messages are gopher-lua's ("cannot
// perform add operation between number and table" where Lua 5.1 says
// "attempt to perform arithmetic on a table value"), and so are its
// compile errors; a number made a string by concatenation or
// string.format("%s") is written in full ("0.30000000000000004") where
// Lua 5.1 writes 14 digits ("0.3"), which tostring does as Lua 5.1 does;
// redis.REDIS_VERSION is evkv's 7.0.0; where a script caught SCRIPT KILL's
// error with pcall, the line the error names is that of the instruction
// after, where Redis names the next line. The Lua debugger (SCRIPT DEBUG YES) and Redis 7's functions (FUNCTION,
// FCALL) are not there.
//
// # Snapshots
//
// The keyspace is also kept in Redis's RDB format, version 10, as Redis
// 7.0 writes it, in Config.Dir's dbfilename (dump.rdb): files Redis
// writes load here and files written here load in Redis.
//
//   - SAVE writes the file as Redis's rdbSave does: to temp-<pid>.rdb in
//     the same directory, synced, renamed over the file, and the
//     directory synced. It blocks the loop while it writes, as Redis's
//     SAVE blocks its thread. LASTSAVE and INFO persistence's
//     rdb_changes_since_last_save, rdb_last_save_time, rdb_saves and
//     rdb_last_load_keys_loaded and _expired follow it. Keys are written
//     with their TTLs, those whose time has passed too, as Redis writes
//     them; loading leaves those out.
//   - BGSAVE writes the file in the background: the keyspace as it was when
//     the command ran, while the loop goes on serving, without fork. The
//     loop walks the keyspace for a millisecond per iteration, encoding
//     keys into RDB bytes that a goroutine writes to temp-bg-<pid>.rdb,
//     syncs and renames, as SAVE does. A change to a key the walk has not
//     reached first writes the key as it was (a copy on write, a key at a
//     time: only the keys changed before the walk reaches them are copied,
//     and those a writing command reads): a command that may write has the
//     keys it names written before it runs and those it looks up as it
//     runs, a blocked client served the keys it is served from and to, and
//     a deletion (an expiry, an eviction), a new value or a TTL the key it
//     changes. Keys added meanwhile are not in the file; FLUSHDB leaves the
//     save the keys it drops, and SWAPDB the databases' numbers at the
//     start. FLUSHALL stops the save and, with save points, saves the empty
//     keyspace, as Redis's does. One key's value is encoded in one go, so a
//     value of millions of elements takes that long in one iteration. The
//     replies and errors are Redis 7.0's: "Background save already in
//     progress" (SAVE too), and while a rewrite of the append-only file
//     runs (Redis's other child) an error, or with SCHEDULE "Background
//     saving scheduled": the cron starts the save once the rewrite is over
//     (in a transaction BGSAVE is always scheduled so, as Redis's).
//     BGREWRITEAOF and CONFIG SET appendonly yes during a save schedule the
//     rewrite likewise. INFO persistence's rdb_bgsave_in_progress,
//     rdb_last_bgsave_status, rdb_last_bgsave_time_sec and
//     rdb_current_bgsave_time_sec are Redis's; a save that succeeds sets
//     LASTSAVE and takes the changes it saved off
//     rdb_changes_since_last_save. One that fails (the directory cannot be
//     written), with save points and stop-writes-on-bgsave-error yes (the
//     default), has the write commands, PING and an EXEC with a write
//     queued refused with Redis's "MISCONF Redis is configured to save RDB
//     snapshots, ..." until a save succeeds, as Redis refuses them.
//     SHUTDOWN and Shutdown stop a save that runs, its temporary file
//     removed, before they save in the foreground, as Redis kills its
//     child.
//   - Save points (the save parameter: "3600 1 300 100 60 10000" saves
//     after an hour if a key changed, after 5 minutes if 100 did, after
//     a minute if 10000 did) are checked ten times a second, as Redis's
//     serverCron checks them: a background save starts when the changes
//     since the last save (counted as Redis's dirty counter counts them)
//     and the seconds since it reach one, unless the last background save
//     failed less than 5 seconds ago. CONFIG SET save changes them; save
//     "" has none.
//   - At start, without the append-only file (which wins, as in Redis),
//     the file is loaded if it exists. Keys whose time has passed are
//     left out, as a Redis master leaves them; a file that is cut short,
//     corrupt, has a wrong checksum (one of 0 means none), names a
//     database past Config.Databases or holds what evkv does not have
//     (streams, modules' values and data, function libraries) stops the
//     start with an error naming the file and the byte, as Redis exits.
//   - With save points, the keyspace is also saved when the server shuts
//     down, by SHUTDOWN (NOSAVE and SAVE choose, as in Redis; a save that
//     fails stops SHUTDOWN unless FORCE) or Shutdown.
//   - DUMP and RESTORE (REPLACE, ABSTTL, IDLETIME, FREQ) take and give
//     Redis 7.0's payloads: a value, the version, a CRC-64. RESTORE's
//     checks, replies, events and logging are Redis's; a relative TTL is
//     logged as absolute, with ABSTTL. FREQ sets the key's access
//     frequency under an LFU maxmemory-policy, IDLETIME its idle time
//     under the others, as Redis's.
//
// Every type is written in the encoding Redis would hold it in (a list's
// nodes as listpacks, small hashes and sorted sets as listpacks, a set of
// few integers as an intset, large ones as plain sequences, sorted sets'
// scores as binary doubles), strings of more than 20 bytes LZF-compressed
// when rdbcompression is yes. Reading takes every encoding Redis 7.0
// reads: those, and the older ziplists, zipmaps, plain lists, quicklists
// of ziplists and text scores; each packed blob is checked whole, as with
// Redis's sanitize-dump-payload yes, so that corrupt data is an error,
// never a panic. A value larger than its compact encoding takes becomes
// the large one on loading, as in Redis (a hash whose listpack holds a
// value longer than 64 bytes too, which Redis would keep compact until
// its next change). Aux fields are skipped, as are LRU and LFU opcodes.
package kv
