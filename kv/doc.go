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
//     rdb_last_load_keys_loaded and _expired follow it.
//   - At start, without the append-only file (which wins, as in Redis),
//     the file is loaded if it exists. Keys whose time has passed are
//     left out, as a Redis master leaves them; a file that is cut short,
//     corrupt, has a wrong checksum (one of 0 means none), names a
//     database past Config.Databases or holds what evkv does not have
//     (streams, modules' values and data, function libraries) stops the
//     start with an error naming the file and the byte, as Redis exits.
//   - With save points (the save parameter), the keyspace is saved when
//     the server shuts down, by SHUTDOWN (NOSAVE and SAVE choose, as in
//     Redis; a save that fails stops SHUTDOWN unless FORCE) or Shutdown.
//     Save points do not trigger saves while serving: Redis makes those
//     with BGSAVE in a forked child, and evkv has no BGSAVE yet.
//   - DUMP and RESTORE (REPLACE, ABSTTL, IDLETIME, FREQ) take and give
//     Redis 7.0's payloads: a value, the version, a CRC-64. RESTORE's
//     checks, replies, events and logging are Redis's; a relative TTL is
//     logged as absolute, with ABSTTL. FREQ is checked and dropped: the
//     eviction policy counts no frequencies.
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
