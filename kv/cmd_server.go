package kv

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(
		cmd("info", -1, "loading stale", 0, 0, 0, "server", "1.0.0", "Returns information and statistics about the server.", infoCommand).withCategories("@dangerous"),
		cmd("time", 1, "loading stale fast", 0, 0, 0, "server", "2.6.0", "Returns the server time.", timeCommand),
		cmd("shutdown", -1, "admin noscript loading stale no_multi allow_busy", 0, 0, 0, "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server.", shutdownCommand),
		cmd("bgrewriteaof", 1, "admin noscript no_async_loading", 0, 0, 0, "server", "1.0.0", "Asynchronously rewrites the append-only file to disk.", bgrewriteaofCommand),
		cmd("bgsave", -1, "admin noscript no_async_loading", 0, 0, 0, "server", "1.0.0", "Asynchronously saves the database(s) to disk.", bgsaveCommand),
		cmd("save", 1, "admin noscript no_async_loading no_multi", 0, 0, 0, "server", "1.0.0", "Synchronously save the dataset to disk", saveCommand),
		cmd("lastsave", 1, "loading stale fast", 0, 0, 0, "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk.", lastsaveCommand).withCategories("@admin", "@dangerous"),
		cmd("config", -2, "", 0, 0, 0, "server", "2.0.0", "A container for server configuration commands.", nil).withSubs(
			cmd("get", -3, "admin noscript loading stale", 0, 0, 0, "", "2.0.0", "Returns the effective values of configuration parameters.", configGet),
			cmd("set", -4, "admin noscript loading stale", 0, 0, 0, "", "2.0.0", "Sets configuration parameters in-flight.", configSet),
			cmd("resetstat", 2, "admin noscript loading stale", 0, 0, 0, "", "2.0.0", "Resets the server's statistics.", configResetstat),
			cmd("rewrite", 2, "admin noscript loading stale", 0, 0, 0, "", "2.8.0", "Persists the effective configuration to file.", configRewrite),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "5.0.0", "Returns helpful text about the different subcommands.", configHelp),
		),
		cmd("command", -1, "loading stale", 0, 0, 0, "server", "2.8.13", "Returns detailed information about all commands.", commandCommand).withCategories("@connection").withSubs(
			cmd("count", 2, "loading stale", 0, 0, 0, "", "2.8.13", "Returns a count of commands.", commandCount).withCategories("@connection"),
			cmd("info", -2, "loading stale", 0, 0, 0, "", "2.8.13", "Returns information about one, multiple or all commands.", commandInfo).withCategories("@connection"),
			cmd("docs", -2, "loading stale", 0, 0, 0, "", "7.0.0", "Returns documentary information about one, multiple or all commands.", commandDocs).withCategories("@connection"),
			cmd("list", -2, "loading stale", 0, 0, 0, "", "7.0.0", "Returns a list of command names.", commandList).withCategories("@connection"),
			cmd("getkeys", -4, "loading stale", 0, 0, 0, "", "2.8.13", "Extracts the key names from an arbitrary command.", commandGetkeys).withCategories("@connection"),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "5.0.0", "Returns helpful text about the different subcommands.", commandHelp).withCategories("@connection"),
		),
	)
}

func timeCommand(s *Server, c *client, args [][]byte) {
	now := time.Now()
	s.w.Array(2)
	s.w.BulkInt(now.Unix())
	s.w.BulkInt(int64(now.Nanosecond() / 1000))
}

func lastsaveCommand(s *Server, c *client, args [][]byte) { s.w.Int(s.snap.lastSave.Unix()) }

// saveCommand writes the RDB file, blocking the loop until it is synced,
// as Redis's SAVE blocks its thread. A failure is replied "ERR", as
// Redis replies it, and logged.
func saveCommand(s *Server, c *client, args [][]byte) {
	if s.bg != nil {
		s.w.Error("ERR " + errBgsaveRunning.Error())
		return
	}
	start := time.Now()
	s.snap.saves++ // SAVE's, not the other foreground saves', as Redis counts them
	if err := s.save(); err != nil {
		s.log.Error("kv: SAVE failed", "err", err)
		s.w.Error("ERR")
		return
	}
	s.log.Info("kv: DB saved on disk", "file", s.snapshotPath(), "took", time.Since(start))
	s.w.OK()
}

// bgsaveCommand starts a background save, as Redis's bgsaveCommand: with
// SCHEDULE, one that cannot start while a rewrite of the append-only file
// runs starts when it is over (saveCron); in a transaction, it is always
// scheduled so.
func bgsaveCommand(s *Server, c *client, args [][]byte) {
	schedule := false
	if len(args) > 1 {
		if len(args) != 2 || !strings.EqualFold(string(args[1]), "schedule") {
			s.w.Error(errSyntax)
			return
		}
		schedule = true
	}
	switch {
	case s.bg != nil:
		s.w.Error("ERR " + errBgsaveRunning.Error())
	case s.rewriting() || s.inExec:
		if schedule || s.inExec {
			s.snap.bgsaveScheduled = true
			s.w.Simple("Background saving scheduled")
			return
		}
		s.w.Error("ERR " + errChildActive.Error())
	default:
		if err := s.startBgsave(); err != nil {
			s.log.Error("kv: BGSAVE could not start", "err", err)
			s.w.Error("ERR")
			return
		}
		s.w.Simple("Background saving started")
	}
}

// actingParams are the inert parameters that have an effect after all:
// the RDB file's, the refusal of writes after a failed background save,
// and which clients may run DEBUG.
var actingParams = []string{"dbfilename", "rdbcompression", "rdbchecksum", "save", "stop-writes-on-bgsave-error", "enable-debug-command"}

// saveOnShutdown saves the keyspace when the server shuts down, if it
// has save points and no SHUTDOWN NOSAVE came, or after SHUTDOWN SAVE,
// unless SHUTDOWN saved it already and nothing changed since. It runs on
// the loop, or before the loop starts.
func (s *Server) saveOnShutdown() error {
	s.abortBgsave("shutting down")
	switch {
	case s.snap.shutdownMode == "nosave",
		s.snap.shutdownMode == "" && !s.savePoints(),
		s.snap.shutdownDone && s.stats.dirty == s.snap.dirtyAtSave:
		return nil
	}
	if err := s.save(); err != nil {
		s.log.Error("kv: saving the RDB file at shutdown failed", "err", err)
		return err
	}
	s.log.Info("kv: DB saved on disk at shutdown", "file", s.snapshotPath())
	return nil
}

func shutdownCommand(s *Server, c *client, args [][]byte) {
	var save, nosave, now, force, abort bool
	for _, a := range args[1:] {
		switch strings.ToUpper(string(a)) {
		case "NOSAVE":
			nosave = true
		case "SAVE":
			save = true
		case "NOW":
			now = true
		case "FORCE":
			force = true
		case "ABORT":
			abort = true
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	switch {
	case abort && (save || nosave || now || force), save && nosave:
		s.w.Error(errSyntax) // as Redis: an illegal combination
		return
	case abort:
		s.w.Error("ERR No shutdown in progress.")
		return
	}
	mode := ""
	if save {
		mode = "save"
	} else if nosave {
		mode = "nosave"
	}
	stopped := false
	if run := s.scripts.run; run != nil && run.busy {
		// Served from inside a busy script: only NOSAVE, which stops it,
		// as Redis's exits in the middle of it.
		if mode != "nosave" {
			s.w.Error(errBusyScript)
			return
		}
		s.stopBusyScript()
		stopped = true
	}
	s.log.Info("kv: shutdown requested by a client", "id", c.id)
	// As Redis's prepareForShutdown: the snapshot first, and a save
	// that fails stops the shutdown, unless FORCE.
	s.snap.shutdownMode = mode
	// As Redis kills its saving child, so that it cannot replace the
	// file saved here.
	s.abortBgsave("SHUTDOWN")
	if mode == "save" || mode == "" && s.savePoints() {
		if err := s.save(); err != nil {
			s.log.Error("kv: saving the RDB file at shutdown failed", "err", err)
			if !force {
				s.snap.shutdownMode = ""
				s.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
				return
			}
		} else {
			s.snap.shutdownDone = true
		}
	}
	switch a := s.aof; {
	case a == nil || a.snapshot:
	case a.f == nil && !force:
		// The log's first rewrite is under way: as Redis, no exit
		// before the keyspace is in a file, unless FORCE.
		s.log.Warn("kv: writing the first append-only file, can't shut down")
		s.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	case a.f != nil:
		a.flush()
		if err := a.f.Sync(); err != nil {
			s.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
			return
		}
	}
	if stopped {
		// Redis exits here: what runs after the script stops (the rest
		// of its EXEC, its caller's next commands) is not logged either.
		s.closeLog()
	}
	c.flags |= flagCloseAfterReply
	s.requestShutdown()
}

func bgrewriteaofCommand(s *Server, c *client, args [][]byte) {
	if s.bg != nil && (s.aof == nil || s.aof.rw == nil) {
		// As Redis's, while its saving child runs.
		s.rewriteScheduled = true
		s.w.Simple("Background append only file rewriting scheduled")
		return
	}
	switch err := s.startRewrite(); {
	case err == nil:
		s.w.Simple("Background append only file rewriting started")
	case errors.Is(err, errRewriteRunning):
		s.w.Error("ERR Background append only file rewriting already in progress")
	default:
		s.log.Error("kv: BGREWRITEAOF could not start the rewrite", "err", err)
		s.w.Error("ERR Can't execute an AOF background rewriting. Please check the server logs for more information.")
	}
}

// config parameters: how CONFIG GET shows each, and how CONFIG SET changes
// it (nil: immutable).
type configParam struct {
	name string
	get  func(s *Server) string
	set  func(s *Server, v string) error
}

// configError is a CONFIG SET failure worded as Redis words it.
type configError string

func (e configError) Error() string { return string(e) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func boolParam(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("argument must be 'yes' or 'no'")
}

func intParam(v string, min, max int64) (int64, error) {
	n, ok := parseInt([]byte(v))
	if !ok {
		return 0, fmt.Errorf("argument couldn't be parsed into an integer")
	}
	if n < min || n > max {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", min, max)
	}
	return n, nil
}

// boolConfig is a yes/no parameter held in the field f returns.
func boolConfig(name string, f func(s *Server) *bool) configParam {
	return configParam{name, func(s *Server) string { return yesNo(*f(s)) }, func(s *Server, v string) error {
		on, err := boolParam(v)
		if err == nil {
			*f(s) = on
		}
		return err
	}}
}

// setInt returns a parameter's setter: an integer in [min, max], read by
// intParam, given to apply.
func setInt(min, max int64, apply func(s *Server, n int64)) func(*Server, string) error {
	return func(s *Server, v string) error {
		n, err := intParam(v, min, max)
		if err == nil {
			apply(s, n)
		}
		return err
	}
}

// setMemory returns a parameter's setter: a memory value of at least min
// and at most the largest int (Redis's LONG_MAX: 2 GiB less a byte on a
// 32-bit platform), read by memoryParam, given to apply, with Redis's
// range error outside.
func setMemory(min int64, apply func(s *Server, n int64)) func(*Server, string) error {
	return func(s *Server, v string) error {
		n, err := memoryParam(v)
		if err == nil && (n < min || n > math.MaxInt) {
			err = fmt.Errorf("argument must be between %d and %d inclusive", min, int64(math.MaxInt))
		}
		if err == nil {
			apply(s, n)
		}
		return err
	}
}

// memoryParam parses "1gb", "512mb", "100" as Redis does; a value past
// the int64 range is refused with Redis's range error, also where Redis's
// arithmetic would wrap around to a value in range.
func memoryParam(v string) (int64, error) {
	digits, unit, ok := memoryUnit(v)
	if !ok {
		return 0, errNotMemory
	}
	mult := int64(unit)
	var n int64
	tooBig := false
	for _, c := range []byte(digits) {
		if d := int64(c - '0'); tooBig || n > (math.MaxInt64-d)/10 {
			tooBig = true
		} else {
			n = n*10 + d
		}
	}
	if tooBig || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("argument must be between 0 and %d inclusive", int64(math.MaxInt64))
	}
	return n * mult, nil
}

// memoryUnit splits a memory value into its digits (none meaning 0) and
// its unit's multiplier, as Redis's memtoull reads it; ok is false for
// anything else.
func memoryUnit(v string) (digits string, mul uint64, ok bool) {
	unit := strings.TrimLeftFunc(v, func(r rune) bool { return r >= '0' && r <= '9' })
	mul, ok = memoryUnits[strings.ToLower(unit)]
	return v[:len(v)-len(unit)], mul, ok
}

var memoryUnits = map[string]uint64{"": 1, "b": 1, "k": 1000, "kb": 1 << 10, "m": 1000 * 1000, "mb": 1 << 20, "g": 1000 * 1000 * 1000, "gb": 1 << 30}

var errNotMemory = errors.New("argument must be a memory value")

var configParams = []configParam{
	{"bind", func(s *Server) string { return s.cfg.Bind }, (*Server).setBind},
	{"port", func(s *Server) string { return strconv.Itoa(s.cfg.Port) }, (*Server).setPort},
	{"unixsocket", func(s *Server) string { return s.cfg.UnixSocket }, nil},
	{"unixsocketperm", func(s *Server) string { return strconv.FormatUint(uint64(s.cfg.UnixSocketPerm.Perm()), 8) }, nil},
	{"databases", func(s *Server) string { return strconv.Itoa(len(s.dbs)) }, nil},
	{"dir", func(s *Server) string {
		if d, err := filepathAbs(s.cfg.Dir); err == nil {
			return d
		}
		return s.cfg.Dir
	}, nil},
	{"appendfilename", func(s *Server) string { return s.cfg.AppendFilename }, nil},
	// tcp-keepalive applies to the connections accepted after it is set.
	{"tcp-keepalive", func(s *Server) string { return strconv.FormatInt(s.keepAlive, 10) }, setInt(0, math.MaxInt32, func(s *Server, n int64) {
		s.keepAlive = n
	})},
	{"client-output-buffer-limit", func(s *Server) string { return formatOutputLimits(s.outputLimits) }, (*Server).setOutputLimits},
	boolConfig("aof-load-truncated", func(s *Server) *bool { return &s.loadTruncated }),
	boolConfig("protected-mode", func(s *Server) *bool { return &s.protectedMode }),
	{"requirepass", func(s *Server) string { return s.cfg.RequirePass }, func(s *Server, v string) error {
		s.cfg.RequirePass = v
		return nil
	}},
	{"maxclients", func(s *Server) string { return strconv.Itoa(s.cfg.MaxClients) }, setInt(1, min(math.MaxUint32, math.MaxInt), func(s *Server, n int64) {
		s.cfg.MaxClients = int(n)
	})},
	{"proto-max-bulk-len", func(s *Server) string { return strconv.Itoa(s.cfg.ProtoMaxBulkLen) }, setMemory(1<<20, func(s *Server, n int64) {
		s.cfg.ProtoMaxBulkLen = int(n)
		for _, c := range s.clients {
			c.parser.MaxBulk = int(n)
		}
	})},
	// client-query-buffer-limit applies from the next read of each client
	// (serve checks it).
	{"client-query-buffer-limit", func(s *Server) string { return strconv.Itoa(s.cfg.QueryBufferLimit) }, setMemory(1<<20, func(s *Server, n int64) {
		s.cfg.QueryBufferLimit = int(n)
	})},
	{"appendonly", func(s *Server) string { return yesNo(s.logOn()) }, func(s *Server, v string) error {
		on, err := boolParam(v)
		if err != nil {
			return err
		}
		switch {
		case on && !s.logOn():
			return s.startLog()
		case !on && s.logOn():
			if err := s.closeLog(); err != nil {
				s.log.Error("kv: closing the append-only file", "err", err)
			}
		}
		return nil
	}},
	{"appendfsync", func(s *Server) string { return s.cfg.AppendFsync }, func(s *Server, v string) error {
		v = strings.ToLower(v)
		if v != "always" && v != "everysec" && v != "no" {
			return fmt.Errorf("argument(s) must be one of the following: everysec, always, no")
		}
		s.cfg.AppendFsync = v
		if s.aof != nil {
			s.aof.fsync = v
		}
		return nil
	}},
	{"notify-keyspace-events", func(s *Server) string { return s.events.String() }, func(s *Server, v string) error {
		f, err := parseNotify(v)
		if err != nil {
			return configError("Invalid event class character. Use 'Ag$lshzxeKEtmd'.")
		}
		s.events = f
		return nil
	}},
	{"slowlog-log-slower-than", func(s *Server) string { return strconv.FormatInt(s.slowlog.slowerThan, 10) }, setInt(-1, math.MaxInt64, func(s *Server, n int64) {
		s.slowlog.slowerThan = n
		s.slowlog.trim() // as the next command does in Redis
	})},
	{"slowlog-max-len", func(s *Server) string { return strconv.FormatInt(s.slowlog.maxLen, 10) }, setInt(0, math.MaxInt64, func(s *Server, n int64) {
		s.slowlog.maxLen = n
		s.slowlog.trim()
	})},
	{"latency-monitor-threshold", func(s *Server) string { return strconv.FormatInt(s.latency.threshold, 10) }, setInt(0, math.MaxInt64, func(s *Server, n int64) {
		s.latency.threshold = n
	})},
	boolConfig("latency-tracking", func(s *Server) *bool { return &s.latencyTracking }),
	{"tracking-table-max-keys", func(s *Server) string { return strconv.FormatInt(s.track.maxKeys, 10) }, setInt(0, math.MaxInt64, func(s *Server, n int64) {
		s.track.maxKeys = n
	})},
	{"latency-tracking-info-percentiles", func(s *Server) string { return formatPercentiles(s.latencyPercentiles) }, func(s *Server, v string) error {
		ps, err := parsePercentiles(v)
		if err == nil {
			s.latencyPercentiles = ps
		}
		return err
	}},
	{"auto-aof-rewrite-min-size", func(s *Server) string { return strconv.FormatInt(s.autoRewriteMin, 10) }, func(s *Server, v string) error {
		n, err := memoryParam(v)
		if err == nil {
			s.autoRewriteMin = n
		}
		return err
	}},
	{"auto-aof-rewrite-percentage", func(s *Server) string { return strconv.FormatInt(s.autoRewritePerc, 10) }, setInt(0, math.MaxInt32, func(s *Server, n int64) {
		s.autoRewritePerc = n
	})},
	{"replicaof", func(s *Server) string { return "" }, nil}, // a master's, as Redis's: immutable there too
	{"timeout", func(s *Server) string { return "0" }, nil},
	{"hz", func(s *Server) string { return "10" }, nil},
	{"active-expire-effort", func(s *Server) string { return strconv.Itoa(s.expiry.effort) }, setInt(1, 10, func(s *Server, n int64) {
		s.setExpireEffort(int(n))
	})},
	{"io-threads", func(s *Server) string { return "1" }, nil},
	{"loglevel", func(s *Server) string { return s.logLevel }, (*Server).setLogLevel},
}

// logLevels are Redis's log levels, each as the slog level it logs from.
var logLevels = map[string]slog.Level{
	"debug":   slog.LevelDebug - 4,
	"verbose": slog.LevelDebug,
	"notice":  slog.LevelInfo,
	"warning": slog.LevelWarn,
	"nothing": slog.LevelError + 100,
}

// setLogLevel is loglevel's setter: Config.LogLevel, if given, logs from
// the level named.
func (s *Server) setLogLevel(v string) error {
	v = strings.ToLower(v)
	l, ok := logLevels[v]
	if !ok {
		return errors.New("argument(s) must be one of the following: debug, verbose, notice, warning, nothing")
	}
	s.logLevel = v
	if s.cfg.LogLevel != nil {
		s.cfg.LogLevel.Set(l)
	}
	return nil
}

// encodingParams are the thresholds of the compact encodings that act:
// a sorted set's, a hash's (its values at most hashPackMax bytes, however
// long the setting) and an intset's; a list's nodes keep Redis's default
// size.
var encodingParams = []configParam{
	limitParam("hash-max-listpack-entries", func(l *encodingLimits) *int { return &l.hashEntries }, false),
	limitParam("hash-max-listpack-value", func(l *encodingLimits) *int { return &l.hashValue }, true),
	limitParam("set-max-intset-entries", func(l *encodingLimits) *int { return &l.intsetEntries }, false),
	limitParam("zset-max-listpack-entries", func(l *encodingLimits) *int { return &l.zsetEntries }, false),
	limitParam("zset-max-listpack-value", func(l *encodingLimits) *int { return &l.zsetValue }, true),
}

// limitParam is the parameter name of the threshold field gives: a count,
// or a memory value ("64", "1kb").
func limitParam(name string, field func(*encodingLimits) *int, memory bool) configParam {
	return configParam{name, func(s *Server) string { return strconv.Itoa(*field(&s.limits)) }, func(s *Server, v string) error {
		var n int64
		var err error
		if memory {
			n, err = memoryParam(v)
		} else {
			n, err = intParam(v, 0, math.MaxInt64)
		}
		if err == nil {
			*field(&s.limits) = int(n)
		}
		return err
	}}
}

// inertParams are Redis 7.0 parameters of what evkv has no counterpart
// for, or keeps its own way: replication, the ACL log, lazy freeing (the
// collector frees), the allocator, the process's title and OOM score, the
// encodings of lists and streams (a list's node size is Redis 7.0's
// default, fixed; the other compact encodings' thresholds act, see
// encodingParams). They are taken,
// checked as Redis checks them, and kept for CONFIG GET, so that a Redis
// configuration file starts evkv; they have no effect, and New logs the
// ones Config.Settings gives, but for actingParams, which the RDB file
// and DEBUG act on. pidfile, logfile and supervised are kept for the
// program around the server to act on, as cmd/evkv does.
var inertParams = []inertParam{
	{"always-show-logo", "no", checkBool, true, false},
	{"set-proc-title", "yes", checkBool, true, false},
	{"proc-title-template", "{title} {listen-addr} {server-mode}", nil, false, false},
	{"supervised", "no", checkEnum("upstart", "systemd", "auto", "no"), true, true},
	{"tcp-backlog", "511", checkInt(0, math.MaxInt32), true, false},
	{"stop-writes-on-bgsave-error", "yes", checkBool, false, false},
	{"rdbcompression", "yes", checkBool, false, false},
	{"rdbchecksum", "yes", checkBool, true, false},
	{"dbfilename", "dump.rdb", nil, false, false},
	{"rdb-del-sync-files", "no", checkBool, false, false},
	{"rdb-save-incremental-fsync", "yes", checkBool, false, false},
	{"replica-serve-stale-data", "yes", checkBool, false, false},
	{"replica-read-only", "yes", checkBool, false, false},
	{"repl-diskless-sync", "yes", checkBool, false, false},
	{"repl-diskless-sync-delay", "5", checkInt(0, math.MaxInt32), false, false},
	{"repl-diskless-sync-max-replicas", "0", checkInt(0, math.MaxInt32), false, false},
	{"repl-diskless-load", "disabled", checkEnum("disabled", "on-empty-db", "swapdb"), false, false},
	{"repl-disable-tcp-nodelay", "no", checkBool, false, false},
	{"replica-priority", "100", checkInt(0, math.MaxInt32), false, false},
	{"replica-ignore-maxmemory", "yes", checkBool, false, false},
	{"replica-announced", "yes", checkBool, false, false},
	{"replica-announce-ip", "", nil, false, false},
	{"replica-announce-port", "0", checkInt(0, 65535), false, false},
	{"repl-ping-replica-period", "10", checkInt(1, math.MaxInt32), false, false},
	{"repl-timeout", "60", checkInt(1, math.MaxInt32), false, false},
	{"repl-backlog-size", "1048576", checkBacklogSize, false, false},
	{"repl-backlog-ttl", "3600", checkInt(0, math.MaxInt64), false, false},
	{"min-replicas-to-write", "0", checkInt(0, math.MaxInt32), false, false},
	{"min-replicas-max-lag", "10", checkInt(0, math.MaxInt32), false, false},
	{"busy-reply-threshold", "5000", checkInt(0, math.MaxInt64), false, false},
	{"acllog-max-len", "128", checkInt(0, math.MaxInt64), false, false},
	{"lazyfree-lazy-eviction", "no", checkBool, false, false},
	{"lazyfree-lazy-expire", "no", checkBool, false, false},
	{"lazyfree-lazy-server-del", "no", checkBool, false, false},
	{"lazyfree-lazy-user-del", "no", checkBool, false, false},
	{"lazyfree-lazy-user-flush", "no", checkBool, false, false},
	{"replica-lazy-flush", "no", checkBool, false, false},
	{"oom-score-adj", "no", checkOOMAdj, false, false},
	{"oom-score-adj-values", "0 200 800", checkOOMValues, false, false},
	{"disable-thp", "yes", checkBool, true, false},
	{"jemalloc-bg-thread", "yes", checkBool, false, false},
	{"appenddirname", "appendonlydir", nil, true, false},
	{"no-appendfsync-on-rewrite", "no", checkBool, false, false},
	{"aof-use-rdb-preamble", "yes", checkBool, false, false},
	{"aof-timestamp-enabled", "no", checkBool, false, false},
	{"aof-rewrite-incremental-fsync", "yes", checkBool, false, false},
	{"list-max-listpack-size", "-2", checkInt(math.MinInt32, math.MaxInt32), false, false},
	{"list-compress-depth", "0", checkInt(0, math.MaxInt32), false, false},
	{"stream-node-max-bytes", "4096", checkMemory, false, false},
	{"stream-node-max-entries", "100", checkInt(0, math.MaxInt64), false, false},
	{"activerehashing", "yes", checkBool, false, false},
	{"dynamic-hz", "yes", checkBool, false, false},
	// save points (actingParams), and Redis 7.0 parameters of what evkv
	// does its own way or not at all.
	{"save", "", checkSave, false, false},
	{"shutdown-timeout", "10", checkInt(0, math.MaxInt32), false, false},
	{"maxmemory-clients", "0", nil, false, false},
	{"activedefrag", "no", checkBool, false, false},
	{"syslog-enabled", "no", checkBool, true, false},
	{"syslog-ident", "redis", nil, true, false},
	{"crash-log-enabled", "yes", checkBool, false, false},
	{"crash-memcheck-enabled", "yes", checkBool, false, false},
	{"enable-debug-command", "no", checkEnum("no", "yes", "local"), true, false},
	{"enable-protected-configs", "no", checkEnum("no", "yes", "local"), true, false},
	{"enable-module-command", "no", checkEnum("no", "yes", "local"), true, false},
	{"io-threads-do-reads", "no", checkBool, true, false},
	{"pidfile", "", nil, true, true},
	{"logfile", "", nil, true, true},
	{"daemonize", "no", checkNoDaemon, true, false},
}

// An inertParam is a parameter taken and kept with no effect: its Redis
// default, its check (nil: any text), and whether it is immutable to
// CONFIG SET, as in Redis, and so given only at start.
type inertParam struct {
	name, def string
	check     func(string) (string, error) // the value as CONFIG GET shows it
	startOnly bool
	byHost    bool // the program around the server acts on it (cmd/evkv)
}

func init() {
	configParams = append(configParams, evictionParams...)
	configParams = append(configParams, tlsParams...)
	configParams = append(configParams, encodingParams...)
	for _, ip := range inertParams {
		name, def, check := ip.name, ip.def, ip.check
		configParams = append(configParams, configParam{
			name: name,
			get: func(s *Server) string {
				if v, ok := s.inert[name]; ok {
					return v
				}
				return def
			},
			set: func(s *Server, v string) error {
				if check != nil {
					var err error
					if v, err = check(v); err != nil {
						return err
					}
				}
				if s.inert == nil {
					s.inert = map[string]string{}
				}
				s.inert[name] = v
				return nil
			},
		})
	}
}

// findInert returns the inert parameter called name, or nil.
// inertValue returns the value of the inert parameter name, without
// findParam, which the functions configParams refers to cannot call.
func (s *Server) inertValue(name string) string {
	if v, ok := s.inert[name]; ok {
		return v
	}
	return findInert(name).def
}

func findInert(name string) *inertParam {
	for i := range inertParams {
		if inertParams[i].name == name {
			return &inertParams[i]
		}
	}
	return nil
}

func checkBool(v string) (string, error) {
	on, err := boolParam(v)
	return yesNo(on), err
}

func checkInt(min, max int64) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := intParam(v, min, max)
		return strconv.FormatInt(n, 10), err
	}
}

func checkMemory(v string) (string, error) {
	n, err := memoryParam(v)
	return strconv.FormatInt(n, 10), err
}

// checkBacklogSize checks repl-backlog-size: a memory value of at least 1,
// raised to 16 KiB as Redis raises it.
func checkBacklogSize(v string) (string, error) {
	n, err := memoryParam(v)
	if err == nil && n < 1 {
		err = fmt.Errorf("argument must be between 1 and %d inclusive", int64(math.MaxInt64))
	}
	return strconv.FormatInt(max(n, 16<<10), 10), err
}

// ParamName returns the name of the parameter that name, an old name Redis
// 7.0 still takes ("slave-read-only"), stands for, or name itself.
func ParamName(name string) string {
	if n, ok := configAliases[strings.ToLower(name)]; ok {
		return n
	}
	return name
}

func checkEnum(values ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		v = strings.ToLower(v)
		if slices.Contains(values, v) {
			return v, nil
		}
		return "", fmt.Errorf("argument(s) must be one of the following: %s", strings.Join(values, ", "))
	}
}

// checkOOMAdj checks oom-score-adj; "relative" is "yes", as Redis shows it.
func checkOOMAdj(v string) (string, error) {
	v, err := checkEnum("no", "yes", "relative", "absolute")(v)
	if v == "relative" {
		v = "yes"
	}
	return v, err
}

// Output buffer limits of client-output-buffer-limit: hard, soft and soft
// seconds of the classes normal, replica (which evkv has no clients of)
// and pubsub. Past them, a client is closed (Server.checkOutput); evloop
// bounds any client's at 1 GiB besides.
var outputLimitClasses = []string{"normal", "slave", "pubsub"}

var defaultOutputLimits = [3][3]int64{{0, 0, 0}, {256 << 20, 64 << 20, 60}, {32 << 20, 8 << 20, 60}}

func formatOutputLimits(l [3][3]int64) string {
	var b strings.Builder
	for i, class := range outputLimitClasses {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s %d %d %d", class, l[i][0], l[i][1], l[i][2])
	}
	return b.String()
}

// setOutputLimits sets the classes v names, as Redis reads them: all or
// none, "replica" also naming "slave".
func (s *Server) setOutputLimits(v string) error {
	f := strings.Fields(v)
	if len(f)%4 != 0 {
		return configError("Wrong number of arguments in buffer limit configuration.")
	}
	l := s.outputLimits
	for i := 0; i < len(f); i += 4 {
		class := slices.Index(outputLimitClasses, strings.ToLower(f[i]))
		if strings.EqualFold(f[i], "replica") {
			class = 1
		}
		if class < 0 {
			return configError("Invalid client class specified in buffer limit configuration.")
		}
		hard, err1 := memoryParam(f[i+1])
		soft, err2 := memoryParam(f[i+2])
		secs, ok := parseInt([]byte(f[i+3]))
		if err1 != nil || err2 != nil || !ok || secs < 0 {
			return configError("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
		}
		l[class] = [3]int64{hard, soft, secs}
	}
	s.outputLimits = l
	return nil
}

// checkOOMValues checks oom-score-adj-values: three integers in
// [-2000, 2000], split on single spaces as Redis splits them.
func checkOOMValues(v string) (string, error) {
	f := strings.Split(v, " ")
	if len(f) != 3 {
		return "", fmt.Errorf("wrong number of arguments")
	}
	for _, x := range f {
		if n, ok := parseInt([]byte(x)); !ok || n < -2000 || n > 2000 {
			return "", configError("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
		}
	}
	return v, nil
}

// checkNoDaemon takes daemonize no: evkv does not fork itself into the
// background (a Go process cannot safely); a supervisor runs it.
func checkNoDaemon(v string) (string, error) {
	on, err := boolParam(v)
	if err == nil && on {
		err = fmt.Errorf("evkv does not daemonize itself: run it under a supervisor (systemd, ...) with daemonize no")
	}
	return yesNo(on), err
}

// findParam returns the parameter called name, by its name or its old
// one, or nil.
func findParam(name string) *configParam {
	if n, ok := configAliases[name]; ok {
		name = n
	}
	for i := range configParams {
		if configParams[i].name == name {
			return &configParams[i]
		}
	}
	return nil
}

// configAliases are the old names Redis 7.0 still takes for parameters,
// from the days of slaves and ziplists, by old name.
var configAliases = map[string]string{
	"slaveof":                  "replicaof",
	"slave-serve-stale-data":   "replica-serve-stale-data",
	"slave-read-only":          "replica-read-only",
	"slave-ignore-maxmemory":   "replica-ignore-maxmemory",
	"slave-announce-ip":        "replica-announce-ip",
	"slave-announce-port":      "replica-announce-port",
	"slave-priority":           "replica-priority",
	"slave-lazy-flush":         "replica-lazy-flush",
	"repl-ping-slave-period":   "repl-ping-replica-period",
	"min-slaves-to-write":      "min-replicas-to-write",
	"min-slaves-max-lag":       "min-replicas-max-lag",
	"lua-time-limit":           "busy-reply-threshold",
	"list-max-ziplist-size":    "list-max-listpack-size",
	"hash-max-ziplist-entries": "hash-max-listpack-entries",
	"hash-max-ziplist-value":   "hash-max-listpack-value",
	"zset-max-ziplist-entries": "zset-max-listpack-entries",
	"zset-max-ziplist-value":   "zset-max-listpack-value",
}

// configGet answers CONFIG GET as Redis 7.0 does: a name without glob
// characters is looked up (by either name) and answered as given; a
// pattern matches names and old names alike.
func configGet(s *Server, c *client, args [][]byte) {
	seen := map[string]bool{}
	var out []string
	add := func(name string, p *configParam) {
		if key := strings.ToLower(name); !seen[key] {
			seen[key] = true
			out = append(out, name, p.get(s))
		}
	}
	for _, pat := range args[2:] {
		lower := strings.ToLower(string(pat))
		if !strings.ContainsAny(lower, "[*?") {
			if p := findParam(lower); p != nil {
				add(string(pat), p)
			}
			continue
		}
		for i := range configParams {
			if globMatch([]byte(lower), []byte(configParams[i].name), true) {
				add(configParams[i].name, &configParams[i])
			}
		}
		for _, old := range slices.Sorted(maps.Keys(configAliases)) {
			if globMatch([]byte(lower), []byte(old), true) {
				add(old, findParam(old))
			}
		}
	}
	s.w.Map(len(out) / 2)
	for _, v := range out {
		s.w.BulkString(v)
	}
}

func configSet(s *Server, c *client, args [][]byte) {
	if len(args)%2 != 0 {
		s.w.Error("ERR wrong number of arguments for 'config|set' command")
		return
	}
	type change struct {
		name string // as given, lower-cased: Redis lets a name and its old one both through
		p    *configParam
		v    string
	}
	var changes []change
	for i := 2; i < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		p := findParam(name)
		if p == nil {
			s.w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + string(args[i]) + "'")
			return
		}
		if name == "dir" || name == "dbfilename" {
			s.w.Error("ERR CONFIG SET failed (possibly related to argument '" + string(args[i]) + "') - can't set protected config")
			return
		}
		if ip := findInert(name); p.set == nil || ip != nil && ip.startOnly {
			s.w.Error("ERR CONFIG SET failed (possibly related to argument '" + string(args[i]) + "') - can't set immutable config")
			return
		}
		for _, ch := range changes {
			if ch.name == name {
				s.w.Error("ERR CONFIG SET failed (possibly related to argument '" + string(args[i]) + "') - duplicate parameter")
				return
			}
		}
		changes = append(changes, change{name, p, string(args[i+1])})
	}
	// All or nothing, as in Redis: a failure restores what was set before,
	// the first set changes of them.
	was := make([]string, len(changes))
	fail := func(set int, name string, err error) {
		for j := set - 1; j >= 0; j-- {
			changes[j].p.set(s, was[j])
		}
		s.tlsDirty.files, s.tlsDirty.port = false, false
		s.w.Error("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + err.Error())
	}
	for k, ch := range changes {
		was[k] = ch.p.get(s)
		if err := ch.p.set(s, ch.v); err != nil {
			fail(k, ch.name, err)
			return
		}
	}
	// The TLS settings apply together, once all are set (a certificate
	// and its key, say), as Redis's apply function applies them.
	if err := s.applyTLS(); err != nil {
		name := ""
		if i := slices.IndexFunc(changes, func(ch change) bool { return strings.HasPrefix(ch.name, "tls-") }); i >= 0 {
			name = changes[i].name
		}
		fail(len(changes), name, err)
		return
	}
	s.w.OK()
}

// setBind listens on v's addresses in place of the old ones (CONFIG SET
// bind), as Redis does.
func (s *Server) setBind(v string) error {
	if len(strings.Fields(v)) > maxBindAddrs {
		return configError("Too many bind addresses specified.")
	}
	s.bindMu.Lock()
	listening := len(s.bound) > 0
	s.bindMu.Unlock()
	if v == s.cfg.Bind && listening {
		return nil // a rollback's, or nothing to change
	}
	if err := s.rebind(v, s.cfg.Port); err != nil {
		return configError("Failed to bind to specified addresses.")
	}
	if s.tls != nil {
		if err := s.rebindTLS(v); err != nil {
			s.rebind(s.cfg.Bind, s.cfg.Port) // all or nothing
			return configError("Failed to bind to specified addresses.")
		}
	}
	s.cfg.Bind = v
	return nil
}

// setPort listens on bind's addresses at port v in place of the old port
// (CONFIG SET port), as Redis does; 0 stops listening on TCP, as in
// Redis, with a Unix socket (unixsocket), and is refused without one,
// which would leave evkv out of reach.
func (s *Server) setPort(v string) error {
	n, err := intParam(v, 0, 65535)
	if err != nil {
		return err
	}
	if n == 0 && s.cfg.UnixSocket == "" && s.tls == nil {
		return configError("evkv has no Unix socket (unixsocket) or TLS port (tls-port): port 0 would leave it unreachable")
	}
	if int(n) == s.cfg.Port {
		return nil
	}
	if err := s.rebind(s.cfg.Bind, int(n)); err != nil {
		return configError("Unable to listen on this port. Check server logs.")
	}
	s.cfg.Port = int(n)
	return nil
}

func configResetstat(s *Server, c *client, args [][]byte) {
	s.stats = stats{}
	clear(s.cmdStats)
	s.w.OK()
}

func configRewrite(s *Server, c *client, args [][]byte) {
	s.w.Error("ERR The server is running without a config file")
}

func configHelp(s *Server, c *client, args [][]byte) {
	s.help("CONFIG",
		"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
		"RESETSTAT", "    Reset statistics reported by the INFO command.",
		"REWRITE", "    Rewrite the configuration file.",
	)
}

// allCommands returns the commands and subcommands, sorted by name.
func allCommands() []*command {
	var out []*command
	for _, c := range commands {
		out = append(out, c)
		for _, sc := range c.subs {
			out = append(out, sc)
		}
	}
	slices.SortFunc(out, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	return out
}

func topCommands() []*command {
	var out []*command
	for _, c := range commands {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	return out
}

// aclCategories are Redis 7.0's ACL categories, in the order COMMAND
// lists a command's.
var aclCategories = []string{
	"@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash", "@string", "@bitmap", "@hyperloglog",
	"@geo", "@stream", "@pubsub", "@admin", "@fast", "@slow", "@blocking", "@dangerous", "@connection",
	"@transaction", "@scripting",
}

// groupCategories are the ACL categories of each group's commands, where
// their own (withCategories) do not replace them.
var groupCategories = map[string]string{
	"string": "@string", "list": "@list", "hash": "@hash", "set": "@set", "sorted_set": "@sortedset",
	"bitmap": "@bitmap", "hyperloglog": "@hyperloglog", "geo": "@geo", "generic": "@keyspace", "connection": "@connection",
	"transactions": "@transaction", "scripting": "@scripting",
}

// categories returns a command's ACL categories, as COMMAND reports them:
// its own, or else its group's (none for a container of subcommands, as
// in Redis), and those its flags imply, as Redis's
// setImplicitACLCategories adds them, in Redis's order.
func (cm *command) categories() []string {
	cats := cm.cats
	if cats == nil && cm.fn != nil {
		if cat, ok := groupCategories[cm.group]; ok {
			cats = []string{cat}
		}
	}
	f := cm.flags
	fast := f&cmdFast != 0 || slices.Contains(cats, "@fast")
	implied := map[string]bool{
		// A read-only scripting command (EVAL_RO) is not @read, as in
		// Redis's setImplicitACLCategories.
		"@write": f&cmdWrite != 0, "@read": f&cmdReadonly != 0 && !slices.Contains(cats, "@scripting"), "@admin": f&cmdAdmin != 0, "@dangerous": f&cmdAdmin != 0,
		"@pubsub": f&cmdPubSub != 0, "@fast": fast, "@slow": !fast, "@blocking": f&cmdBlocking != 0,
	}
	var out []string
	for _, cat := range aclCategories {
		if implied[cat] || slices.Contains(cats, cat) {
			out = append(out, cat)
		}
	}
	return out
}

// writeCommandInfo writes one command's COMMAND INFO entry.
func (s *Server) writeCommandInfo(cm *command) {
	s.w.Array(10)
	s.w.BulkString(cm.name)
	s.w.Int(int64(cm.arity))
	var flags []string
	for _, fn := range flagNames {
		if cm.flags&fn.f != 0 && fn.f != cmdMayReplicate { // hidden, as Redis hides it
			flags = append(flags, fn.name)
		}
	}
	s.w.Set(len(flags))
	for _, f := range flags {
		s.w.Simple(f)
	}
	s.w.Int(int64(cm.firstKey))
	s.w.Int(int64(cm.lastKey))
	s.w.Int(int64(cm.step))
	cats := cm.categories()
	s.w.Set(len(cats))
	for _, c := range cats {
		s.w.Simple(c)
	}
	s.w.Set(0) // tips
	// The key specs: in RESP3 a set, as Redis's.
	s.w.Set(b2i(cm.firstKey > 0) + b2i(cm.keyCount > 0))
	if cm.firstKey > 0 {
		last := cm.lastKey
		if last > 0 {
			last -= cm.firstKey
		}
		s.writeKeySpec(cm.notKey, cm.firstKey, "range", specField{"lastkey", last}, specField{"keystep", cm.step}, specField{"limit", 0})
	}
	if cm.keyCount > 0 {
		s.writeKeySpec(false, cm.keyCount, "keynum", specField{"keynumidx", 0}, specField{"firstkey", 1}, specField{"keystep", 1})
	}
	subs := make([]*command, 0, len(cm.subs))
	for _, sc := range cm.subs {
		subs = append(subs, sc)
	}
	slices.SortFunc(subs, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	if len(subs) == 0 {
		s.w.Set(0) // none: in RESP3 an empty set, as Redis's
		return
	}
	s.w.Array(len(subs))
	for _, sc := range subs {
		s.writeCommandInfo(sc)
	}
}

// specField is a field of a key spec's find_keys spec.
type specField struct {
	name string
	v    int
}

// writeKeySpec writes a key spec of COMMAND INFO's: the search for its
// keys begins at index, and finds them by find ("range", "keynum") with
// the fields given.
func (s *Server) writeKeySpec(notKey bool, index int, find string, fields ...specField) {
	s.w.Map(3) // no notes, which Redis leaves out where it has none
	s.w.BulkString("flags")
	if notKey {
		s.w.Set(1)
		s.w.Simple("not_key")
	} else {
		s.w.Set(0)
	}
	s.w.BulkString("begin_search")
	s.w.Map(2)
	s.w.BulkString("type")
	s.w.BulkString("index")
	s.w.BulkString("spec")
	s.w.Map(1)
	s.w.BulkString("index")
	s.w.Int(int64(index))
	s.w.BulkString("find_keys")
	s.w.Map(2)
	s.w.BulkString("type")
	s.w.BulkString(find)
	s.w.BulkString("spec")
	s.w.Map(len(fields))
	for _, f := range fields {
		s.w.BulkString(f.name)
		s.w.Int(int64(f.v))
	}
}

func commandCommand(s *Server, c *client, args [][]byte) {
	all := topCommands()
	s.w.Array(len(all))
	for _, cm := range all {
		s.writeCommandInfo(cm)
	}
}

func commandCount(s *Server, c *client, args [][]byte) { s.w.Int(int64(len(commands))) }

// namedCommand finds "get" or "client|list".
func namedCommand(name string) *command {
	parent, sub, ok := strings.Cut(strings.ToLower(name), "|")
	cm := commands[parent]
	if ok && cm != nil {
		return cm.subs[sub]
	}
	return cm
}

func commandInfo(s *Server, c *client, args [][]byte) {
	if len(args) == 2 {
		commandCommand(s, c, args)
		return
	}
	s.w.Array(len(args) - 2)
	for _, a := range args[2:] {
		if cm := namedCommand(string(a)); cm != nil {
			s.writeCommandInfo(cm)
		} else {
			s.w.Null() // a null bulk string in RESP2, as Redis's addReplyNull
		}
	}
}

func (s *Server) writeCommandDocs(cm *command) {
	n := 3
	if len(cm.subs) > 0 {
		n++
	}
	s.w.Map(n)
	s.w.BulkString("summary")
	s.w.BulkString(cm.summary)
	s.w.BulkString("since")
	s.w.BulkString(cm.since)
	s.w.BulkString("group")
	s.w.BulkString(strings.ReplaceAll(cm.group, "_", "-")) // sorted_set is Redis's sorted-set
	if len(cm.subs) > 0 {
		s.w.BulkString("subcommands")
		subs := make([]*command, 0, len(cm.subs))
		for _, sc := range cm.subs {
			subs = append(subs, sc)
		}
		slices.SortFunc(subs, func(a, b *command) int { return strings.Compare(a.name, b.name) })
		s.w.Map(len(subs))
		for _, sc := range subs {
			s.w.BulkString(sc.name)
			s.writeCommandDocs(sc)
		}
	}
}

func commandDocs(s *Server, c *client, args [][]byte) {
	var list []*command
	if len(args) == 2 {
		list = topCommands()
	} else {
		for _, a := range args[2:] {
			if cm := namedCommand(string(a)); cm != nil {
				list = append(list, cm)
			}
		}
	}
	s.w.Map(len(list))
	for _, cm := range list {
		s.w.BulkString(cm.name)
		s.writeCommandDocs(cm)
	}
}

// commandList is COMMAND LIST, with Redis 7.0's filters: PATTERN, a
// glob of the names; ACLCAT, an ACL category named without its '@' in
// any case, none listed for a category Redis does not have; MODULE, none
// listed, as there are no modules.
func commandList(s *Server, c *client, args [][]byte) {
	listed := func(cm *command) bool { return true }
	if len(args) > 2 {
		if len(args) != 5 || strings.ToLower(string(args[2])) != "filterby" {
			s.w.Error(errSyntax)
			return
		}
		arg := args[4]
		switch strings.ToLower(string(args[3])) {
		case "pattern":
			listed = func(cm *command) bool { return globMatch(arg, []byte(cm.name), true) }
		case "aclcat":
			cat := "@" + strings.ToLower(string(arg))
			listed = func(cm *command) bool { return slices.Contains(cm.categories(), cat) }
		case "module":
			listed = func(cm *command) bool { return false }
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	var out []string
	for _, cm := range allCommands() {
		if listed(cm) {
			out = append(out, cm.name)
		}
	}
	s.w.Array(len(out))
	for _, n := range out {
		s.w.BulkString(n)
	}
}

// commandGetkeys is COMMAND GETKEYS, as Redis 7.0's
// getKeysSubcommandImpl: the command is looked up as Redis's
// lookupCommand looks it up (an unknown subcommand is no command), one
// with no keys says so before its arguments are counted, and keys found
// none of are "Invalid arguments specified for command", but for one
// that may have none (EVAL: no_mandatory_keys).
func commandGetkeys(s *Server, c *client, args [][]byte) {
	target := args[2:]
	cm := lookupCommand(target)
	switch {
	case cm == nil:
		s.w.Error("ERR Invalid command specified")
		return
	case (cm.firstKey == 0 || cm.notKey) && cm.keys == nil:
		s.w.Error("ERR The command has no key arguments")
		return
	case !arityOK(cm.arity, len(target)):
		s.w.Error("ERR Invalid number of arguments specified for command")
		return
	}
	keys := cm.keyArgs(target)
	if len(keys) == 0 && cm.flags&cmdNoMandatoryKeys == 0 {
		s.w.Error("ERR Invalid arguments specified for command")
		return
	}
	s.w.Array(len(keys))
	for _, k := range keys {
		s.w.Bulk(k)
	}
}

func commandHelp(s *Server, c *client, args [][]byte) {
	s.help("COMMAND",
		"(no subcommand)", "    Return details about all Redis commands.",
		"COUNT", "    Return the total number of commands in this Redis server.",
		"LIST", "    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
		"DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
		"GETKEYS <full-command>", "    Return the keys from a full Redis command.",
	)
}

func infoCommand(s *Server, c *client, args [][]byte) {
	sections := map[string]bool{}
	for _, a := range args[1:] {
		sections[strings.ToLower(string(a))] = true
	}
	all := len(sections) == 0 || sections["all"] || sections["everything"] || sections["default"]
	want := func(name string) bool { return all || sections[name] }
	var b strings.Builder
	section := func(name string) {
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + name + "\r\n")
	}
	field := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	if want("server") {
		section("Server")
		field("redis_version", serverVersion)
		field("redis_mode", "standalone")
		field("evkv", "1")
		field("os", runtime.GOOS+" "+runtime.GOARCH)
		field("arch_bits", strconv.IntSize)
		field("multiplexing_api", multiplexingAPI())
		field("go_version", runtime.Version())
		field("process_id", os.Getpid())
		field("run_id", s.runID)
		field("tcp_port", s.cfg.Port)
		up := time.Since(s.start)
		field("uptime_in_seconds", int64(up.Seconds()))
		field("uptime_in_days", int64(up.Hours()/24))
		field("hz", 10)
		field("executable", executable())
	}
	if want("clients") {
		section("Clients")
		blocked, pubsub, timed := 0, 0, 0
		for _, cl := range s.clients {
			if cl.postponed {
				blocked++ // as Redis counts a client CLIENT PAUSE holds back
			}
			if cl.blocked() {
				blocked++
				if cl.block.armed {
					timed++
				}
			}
			if cl.subscriptions() > 0 {
				pubsub++
			}
		}
		maxIn, maxOut := s.recentBuffers.max()
		field("connected_clients", len(s.clients))
		field("cluster_connections", 0)
		field("maxclients", s.cfg.MaxClients)
		field("client_recent_max_input_buffer", maxIn)
		field("client_recent_max_output_buffer", maxOut)
		field("blocked_clients", blocked)
		field("tracking_clients", s.track.clients)
		field("clients_in_timeout_table", timed)
		field("pubsub_clients", pubsub) // as Redis 7.2
	}
	if want("memory") {
		section("Memory")
		_, sys := memoryUsed()
		heap := s.usedMemory()
		field("used_memory", heap)
		field("used_memory_human", human(heap))
		field("used_memory_rss", rss())
		field("used_memory_rss_human", human(rss()))
		peak := s.notePeak(heap)
		field("used_memory_peak", peak)
		field("used_memory_peak_human", human(peak))
		field("used_memory_startup", s.memStartup)
		field("used_memory_go_sys", sys)
		field("maxmemory", s.evict.max)
		field("maxmemory_human", human(s.evict.max))
		field("maxmemory_policy", s.evict.policy.String())
		field("mem_allocator", "go")
		field("used_memory_scripts_eval", s.scripts.mem)
		field("number_of_cached_scripts", len(s.scripts.cache))
	}
	if want("persistence") {
		section("Persistence")
		field("loading", 0)
		field("rdb_changes_since_last_save", s.stats.dirty-s.snap.dirtyAtSave)
		field("rdb_bgsave_in_progress", b2i(s.bg != nil))
		field("rdb_last_save_time", s.snap.lastSave.Unix())
		if s.snap.bgsaveErr != nil {
			field("rdb_last_bgsave_status", "err")
		} else {
			field("rdb_last_bgsave_status", "ok")
		}
		field("rdb_last_bgsave_time_sec", s.snap.lastBgsaveTime)
		if s.bg != nil {
			field("rdb_current_bgsave_time_sec", time.Now().Unix()-s.bg.started.Unix())
		} else {
			field("rdb_current_bgsave_time_sec", -1)
		}
		field("rdb_saves", s.snap.saves)
		field("rdb_last_load_keys_expired", s.snap.expired)
		field("rdb_last_load_keys_loaded", s.snap.loaded)
		field("aof_enabled", b2i(s.aof != nil && s.aof.f != nil))
		inProgress, status, size, failures := 0, "ok", int64(0), 0
		writeStatus := "ok"
		if s.lastRewriteErr != nil {
			status = "err"
		}
		if a := s.aof; a != nil {
			inProgress = b2i(s.rewriting())
			if a.err != nil {
				writeStatus = "err"
			}
			size, failures = a.size, a.failures
		}
		field("aof_rewrite_in_progress", inProgress)
		field("aof_rewrite_scheduled", b2i(s.rewriteScheduled))
		field("aof_last_bgrewrite_status", status)
		field("aof_rewrites", s.stats.aofRewrites)
		field("aof_rewrites_consecutive_failures", failures)
		field("aof_last_write_status", writeStatus)
		if s.logOn() {
			field("aof_current_size", size)
			field("aof_base_size", s.aof.base)
		}
	}
	if want("stats") {
		section("Stats")
		field("total_connections_received", s.stats.connections)
		field("total_commands_processed", s.stats.commands)
		field("total_net_input_bytes", s.stats.netIn)
		field("total_net_output_bytes", s.stats.netOut)
		field("rejected_connections", s.stats.rejectedConns)
		field("expired_keys", s.stats.expiredKeys)
		field("expired_stale_perc", strconv.FormatFloat(s.expiry.stale*100, 'f', 2, 64))
		field("expired_time_cap_reached_count", s.expiry.capped)
		field("expire_cycle_cpu_milliseconds", s.expiry.timeSpent.Milliseconds())
		field("evicted_keys", s.stats.evictedKeys)
		field("evicted_scripts", s.stats.evictedScripts) // as Redis 7.4
		field("keyspace_hits", s.stats.keyspaceHits)
		field("keyspace_misses", s.stats.keyspaceMiss)
		field("pubsub_channels", len(s.channels.m))
		field("pubsub_patterns", len(s.patterns.m))
		field("pubsubshard_channels", len(s.shards.m))
		field("tracking_total_keys", len(s.track.table))
		field("tracking_total_items", s.track.items)
		field("tracking_total_prefixes", len(s.track.prefixes))
		field("total_error_replies", s.stats.errorReplies)
		field("unexpected_error_replies", s.stats.protoErrors)
		field("client_output_buffer_limit_disconnections", s.stats.outputLimitCloses) // as Redis 7.2
	}
	if want("replication") {
		section("Replication")
		field("role", "master")
		field("connected_slaves", 0)
		field("master_failover_state", "no-failover")
		field("master_replid", s.replID)
		field("master_replid2", strings.Repeat("0", 40))
		field("master_repl_offset", 0)
		field("second_repl_offset", -1)
		field("repl_backlog_active", 0)
		field("repl_backlog_size", 1<<20)
		field("repl_backlog_first_byte_offset", 0)
		field("repl_backlog_histlen", 0)
	}
	if want("cpu") {
		section("CPU")
		if user, sys, ok := cpuTimes(); ok {
			field("used_cpu_sys", fmt.Sprintf("%.6f", sys.Seconds()))
			field("used_cpu_user", fmt.Sprintf("%.6f", user.Seconds()))
		}
	}
	if want("modules") || sections["module_list"] {
		section("Modules") // evkv loads none
	}
	if sections["commandstats"] || sections["everything"] || sections["all"] {
		section("Commandstats")
		for _, cm := range allCommands() {
			if st := s.cmdStats[cm.id]; st.calls > 0 || st.rejected > 0 || st.failed > 0 {
				perCall := 0.0
				if st.calls > 0 {
					perCall = float64(st.time) / float64(time.Microsecond) / float64(st.calls)
				}
				fmt.Fprintf(&b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
					cm.name, st.calls, st.time.Microseconds(), perCall, st.rejected, st.failed)
			}
		}
	}
	if want("errorstats") {
		section("Errorstats")
		for _, code := range slices.Sorted(maps.Keys(s.stats.errorCodes)) {
			fmt.Fprintf(&b, "errorstat_%s:count=%d\r\n", code, s.stats.errorCodes[code])
		}
	}
	if sections["latencystats"] || sections["everything"] || sections["all"] {
		section("Latencystats")
		s.latencyStats(&b)
	}
	if want("cluster") {
		section("Cluster")
		field("cluster_enabled", 0)
	}
	if want("keyspace") {
		section("Keyspace")
		for _, d := range s.dbs {
			if n := d.size(); n > 0 {
				fmt.Fprintf(&b, "db%d:keys=%d,expires=%d,avg_ttl=0\r\n", d.id, n, d.expires.len())
			}
		}
	}
	s.w.Verbatim("txt", []byte(b.String()))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

func executable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

func multiplexingAPI() string {
	switch runtime.GOOS {
	case "linux":
		return "epoll"
	case "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
		return "kqueue"
	}
	return "none"
}

func filepathAbs(p string) (string, error) { return filepath.Abs(p) }
