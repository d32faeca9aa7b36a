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
package kv
