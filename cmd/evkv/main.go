// Command evkv is a Redis-compatible server on evloop: one event loop owns
// the keyspace and every connection, as Redis's one thread does.
//
//	evkv [--bind 127.0.0.1] [--port 6379] [--unixsocket path]
//	     [--unixsocketperm 700] [--requirepass pw]
//	     [--appendonly yes|no] [--appendfsync always|everysec|no] [--dir .]
//	     [--maxclients 10000] [--proto-max-bulk-len 512mb]
//	     [--client-query-buffer-limit 1gb]
//	     [--slowlog-log-slower-than 10000] [--slowlog-max-len 128]
//	     [--protected-mode yes|no] [--pidfile path] [--logfile path]
//	     [--daemonize no] [--supervised no|systemd|auto] [--config redis.conf]
//	     [--nap 20us]
//	evkv redis.conf [flags]
//
// Flags given on the command line win over the config file, whose syntax
// is redis.conf's ("port 6380", "appendonly yes", one setting a line,
// values quoted as Redis quotes them, # comments). The file may also give
// the other parameters CONFIG SET takes ("latency-monitor-threshold 100",
// "save 900 1"), checked as CONFIG SET checks them, and the other
// parameters of Redis 7.0's redis.conf, most of which have no effect here
// (RDB snapshots, replication, encodings' thresholds, ...: the log names
// them at start), so that a Redis configuration file starts evkv; a
// setting evkv does not know stops the start with its line named. As
// redis-server, evkv takes any of them on the command line too, after the
// file's: "--save 900 1 300 10" (a value runs to the next "--"). As in
// Redis, bind may name several addresses ("127.0.0.1 -::1": a leading '-'
// marks one the system may lack, "*" is every IPv4 address, "::*" every
// IPv6 one), all listened on. unixsocket is a Unix socket listened on as
// well (its file, if one is left there, removed first and removed at
// exit), with unixsocketperm's permissions; port 0 means no TCP listener,
// as in Redis, and is refused without a unixsocket. SIGTERM and SIGINT
// shut down gracefully: no command runs once the append-only file is
// written, synced and closed, so every reply sent is in it; SIGHUP and SIGPIPE are ignored,
// as Redis ignores them. dir must exist. logfile is opened for each line,
// so a log rotated by renaming it is made again; loglevel (debug,
// verbose, notice, warning, nothing) sets what is logged. With appendfsync
// always, a write to the append-only file that fails (a full disk) makes
// evkv exit with status 1, as Redis exits, before any reply acknowledges
// what the file lacks; with everysec or no, the write commands and PING
// are refused with Redis's MISCONF error until the file takes writes
// again.
//
// Snapshots are Redis's RDB files, version 10, in dir's dbfilename
// (dump.rdb): with appendonly no, the file is loaded at start (a corrupt
// one stops the start, naming it), SAVE writes it, BGSAVE writes it in
// the background, as the save points ("save 3600 1 300 100 60 10000")
// do once their changes and seconds are reached, so that a crash loses
// only what changed since, and with save points SIGTERM, SIGINT and
// SHUTDOWN write it before exiting, as Redis's shutdown does. A
// background save is the keyspace as it was when it began, written while
// the loop serves, without fork (see package kv); one that fails, with
// stop-writes-on-bgsave-error yes, has the write commands refused with
// Redis's MISCONF error until a save succeeds. DUMP and RESTORE take
// Redis's payloads. Streams, modules and functions are
// not supported, in files as elsewhere.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evloop/evloop/kv"
	"github.com/evloop/evloop/resp"
)

// passFlags are the flags of parameters the server keeps (kv's CONFIG
// parameters), besides those of settings; pidfile and logfile are acted on
// here.
var passFlags = []struct{ name, def, usage string }{
	{"protected-mode", "yes", "without a password, refuse clients not at 127.0.0.1 or ::1"},
	{"daemonize", "no", "only no: evkv runs in the foreground, under a supervisor"},
	{"supervised", "no", "systemd or auto: tell systemd (NOTIFY_SOCKET) when ready and when stopping"},
	{"pidfile", "", "a file to write the process id to while running"},
	{"logfile", "", "a file to append the log to (default standard error)"},
}

// settings are the configurable values, by their redis.conf names.
var settings = []string{"bind", "port", "unixsocket", "unixsocketperm", "requirepass", "appendonly", "appendfsync", "dir",
	"maxclients", "proto-max-bulk-len", "client-query-buffer-limit", "notify-keyspace-events", "databases", "appendfilename",
	"slowlog-log-slower-than", "slowlog-max-len", "tls-port", "tls-cert-file", "tls-key-file", "tls-ca-cert-file", "tls-auth-clients"}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "evkv:", err)
		os.Exit(1)
	}
}

func run(argv []string) error {
	// Caught from the start: a supervisor's SIGTERM right after the
	// ready notice must shut down gracefully too.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	// As Redis: a closed terminal or a supervisor's SIGHUP leaves the
	// server running, and a log pipe whose reader went away makes writes
	// to it fail rather than kill the process (Go's default for standard
	// error) before the file is synced.
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	fs := flag.NewFlagSet("evkv", flag.ContinueOnError)
	values := map[string]*string{}
	defaults := map[string]string{"bind": "127.0.0.1", "port": "6379", "unixsocketperm": "0", "appendonly": "no", "appendfsync": "everysec",
		"dir": ".", "maxclients": "10000", "proto-max-bulk-len": "512mb", "client-query-buffer-limit": "1gb", "databases": "16", "appendfilename": "appendonly.aof",
		"slowlog-log-slower-than": "10000", "slowlog-max-len": "128", "tls-port": "0", "tls-auth-clients": "yes"}
	for _, name := range settings {
		values[name] = fs.String(name, defaults[name], "redis.conf's "+name)
	}
	configFile := fs.String("config", "", "a config file in redis.conf syntax")
	nap := fs.Duration("nap", 20*time.Microsecond, "how long the loop sleeps when it finds no more requests, so that the next ones come together (0: never; evkv's own, not in redis.conf)")
	// Parameters the server keeps, given as flags as redis-server takes
	// them (its systemd unit runs it with --supervised systemd
	// --daemonize no): they win over the file.
	passed := map[string]*string{}
	for _, f := range passFlags {
		passed[f.name] = fs.String(f.name, f.def, f.usage)
	}
	// As redis-server, a first argument that is not a flag is the config
	// file: "evkv /etc/redis/redis.conf --daemonize no".
	if len(argv) > 0 && !strings.HasPrefix(argv[0], "-") {
		argv = append([]string{"--config", argv[0]}, argv[1:]...)
	}
	argv, directives := splitDirectives(fs, argv)
	if err := fs.Parse(argv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: a config file comes first, flags after it", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// Settings evkv has no flag for (latency-monitor-threshold, ...) go
	// to the server as CONFIG SET parameters, checked as CONFIG SET
	// checks them; lines are where the file gave each.
	others := map[string]string{}
	var lines map[string]int
	if *configFile != "" {
		conf, at, err := readConfig(*configFile)
		if err != nil {
			return err
		}
		lines = at
		for k, v := range conf {
			switch _, flag := indexOf(k); {
			case !flag:
				others[k] = v
			case !set[k]:
				*values[k] = v
			default:
				delete(lines, k) // the flag's value is the one used
			}
		}
	}
	for k, v := range directives {
		others[k] = v // after the file, as redis-server appends them to it
		delete(lines, k)
	}
	cfg, err := buildConfig(values)
	if err != nil {
		return err
	}
	if strings.TrimSpace(cfg.Bind) == "" {
		return errors.New("bind names no address: evkv would listen nowhere")
	}
	maps.Copy(cfg.Settings, others)
	cfg.Nap = *nap
	if cfg.Nap <= 0 {
		cfg.Nap = -1 // never
	}
	for name, v := range passed {
		if set[name] {
			cfg.Settings[name] = *v
			delete(lines, name)
		}
	}
	if info, err := os.Stat(cfg.Dir); err != nil || !info.IsDir() {
		// As Redis refuses to start when it cannot chdir there.
		return fmt.Errorf("dir %q: not a directory that can be used: %v", cfg.Dir, err)
	}
	logOut := io.Writer(os.Stderr)
	if path := inDir(cfg, "logfile"); path != "" {
		lf := &logFile{path: path}
		if _, err := lf.Write(nil); err != nil {
			return fmt.Errorf("logfile: %w", err)
		}
		logOut = lf
	}
	level := new(slog.LevelVar) // loglevel sets it (kv.Config.LogLevel)
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	cfg.Logger, cfg.LogLevel = log, level
	// The append-only file is replayed in New, which a signal does not
	// wait for: as Redis, evkv exits while loading, the file untouched.
	type started struct {
		srv *kv.Server
		err error
	}
	loaded := make(chan started, 1)
	go func() {
		srv, err := kv.New(cfg)
		loaded <- started{srv, err}
	}()
	var srv *kv.Server
	select {
	case s := <-sig:
		log.Warn("evkv: shutting down while loading", "signal", s.String())
		return nil
	case st := <-loaded:
		srv, err = st.srv, st.err
	}
	if err != nil {
		var se *kv.SettingError
		if errors.As(err, &se) {
			if line, ok := lines[se.Name]; ok {
				return fmt.Errorf("%s:%d: %s: %v", *configFile, line, se.Name, se.Err)
			}
		}
		return err
	}
	addrs, err := srv.ListenBind()
	if err != nil {
		srv.Shutdown(context.Background())
		var be *kv.BindError
		if errors.As(err, &be) && errors.Is(err, syscall.EADDRINUSE) && be.Addr != cfg.UnixSocket {
			return fmt.Errorf("cannot listen on %s: the address is already in use (is another server running on port %d?)", be.Addr, cfg.Port)
		}
		return err
	}
	if path := inDir(cfg, "pidfile"); path != "" {
		if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			log.Warn("evkv: writing the pid file", "err", err) // as Redis: not fatal
		} else {
			defer os.Remove(path)
		}
	}
	log.Info("evkv ready to accept connections", "addr", joinAddrs(addrs), "appendonly", cfg.AppendOnly)
	supervised := strings.ToLower(cfg.Settings["supervised"])
	underSystemd := supervised == "systemd" || supervised == "auto"
	if underSystemd {
		if err := notify("READY=1\nSTATUS=Ready to accept connections"); err != nil {
			log.Warn("evkv: telling systemd it is ready", "err", err)
		}
	}
	gcCtx, stopGC := context.WithCancel(context.Background())
	defer stopGC()
	go tuneGC(gcCtx, time.Second)
	var failed error
	select {
	case s := <-sig:
		log.Info("evkv shutting down", "signal", s.String())
	case <-srv.Done():
		if failed = srv.Err(); failed != nil {
			// With appendfsync always, a write to the append-only file
			// failed: as Redis, evkv exits, with status 1.
			log.Error("evkv exiting", "err", failed)
		} else {
			log.Info("evkv shutting down", "reason", "SHUTDOWN")
		}
	}
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		// As Redis: a second SIGINT while shutting down exits at once.
		for {
			select {
			case s := <-sig:
				if s == syscall.SIGINT {
					log.Warn("evkv: you insist... exiting now")
					os.Exit(1)
				}
			case <-stopped:
				return
			}
		}
	}()
	if underSystemd {
		notify("STOPPING=1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return errors.Join(failed, fmt.Errorf("shutdown: %w", err))
	}
	if failed != nil {
		return failed
	}
	log.Info("evkv stopped")
	return nil
}

// inDir returns the path of the file setting name gives, taken from dir if
// it is relative: Redis changes to dir before it writes its pid file and
// its log.
func inDir(cfg kv.Config, name string) string {
	path := cfg.Settings[name]
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(cfg.Dir, path)
}

// joinAddrs returns addrs separated by spaces.
func joinAddrs(addrs []net.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, " ")
}

// notify sends state to systemd's notification socket, named by
// NOTIFY_SOCKET when systemd runs evkv as a notify service (redis-server's
// unit does), as redis-server does under supervised systemd; without the
// variable it does nothing.
func notify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	// An abstract socket's name starts with '@', which the net package
	// reads as such.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}

// readConfig reads the settings of a redis.conf-style file, and the line
// of each.
func readConfig(path string) (map[string]string, map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return parseConfig(path, data)
}

// parseConfig parses a redis.conf-style file, named name in errors: a
// setting a line, its name and value split into words as Redis splits
// them (blanks between words; "..." with escapes, '...'), # comments.
// A setting given twice takes the later value, as in Redis. evkv's own
// settings (its flags) take one value, bind several addresses; any other
// takes its words joined by spaces, as CONFIG SET takes them ("save 900
// 1" is "900 1"), for the server to check. lines holds each setting's
// line.
func parseConfig(name string, data []byte) (settings map[string]string, lines map[string]int, err error) {
	out, at := map[string]string{}, map[string]int{}
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.Trim(line, " \t\r\n")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		args, err := resp.SplitArgs(line)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: unbalanced quotes in configuration line", name, i+1)
		}
		if len(args) == 0 {
			continue
		}
		// An old name is its parameter's, so that the later line wins.
		setting := kv.ParamName(strings.ToLower(string(args[0])))
		_, own := indexOf(setting)
		switch {
		case !validSettingName(setting):
			return nil, nil, fmt.Errorf("%s:%d: unknown or unsupported setting %q", name, i+1, args[0])
		case setting == "bind" && len(args) >= 2:
			if out[setting] = bindList(args[1:]); out[setting] == "" {
				return nil, nil, fmt.Errorf("%s:%d: bind names no address: evkv would listen nowhere", name, i+1)
			}
		case own && len(args) == 2:
			out[setting] = string(args[1])
		case own || len(args) < 2:
			return nil, nil, fmt.Errorf("%s:%d: wrong number of arguments for %s", name, i+1, setting)
		case setting == "client-output-buffer-limit" && out[setting] != "":
			// One line a class, as Redis's file gives them: the classes add up.
			out[setting] += " " + string(bytes.Join(args[1:], []byte(" ")))
		default:
			out[setting] = string(bytes.Join(args[1:], []byte(" ")))
		}
		at[setting] = i + 1
	}
	return out, at, nil
}

// validSettingName reports whether name could be a setting's: lower-case
// letters, digits and dashes.
func validSettingName(name string) bool {
	for _, c := range []byte(name) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return name != ""
}

// bindList returns bind's addresses joined by spaces, as CONFIG GET shows
// them; they may also come as one quoted word ("127.0.0.1 ::1"), as Redis
// reads them.
func bindList(args [][]byte) string {
	if len(args) == 1 {
		if words, err := resp.SplitArgs(args[0]); err == nil {
			args = words
		}
	}
	return string(bytes.Join(args, []byte(" ")))
}

func indexOf(name string) (int, bool) {
	for i, s := range settings {
		if s == name {
			return i, true
		}
	}
	return 0, false
}

// buildConfig checks the settings and makes them a kv.Config.
func buildConfig(v map[string]*string) (kv.Config, error) {
	var cfg kv.Config
	var err error
	// num reads a count (a size too, for a memory setting, as "512mb") in
	// [0, most].
	num := func(name string, memory bool, most int64) int {
		if err != nil {
			return 0
		}
		var n int64
		var e error
		if memory {
			n, e = parseMemory(*v[name])
		} else {
			n, e = strconv.ParseInt(strings.TrimSpace(*v[name]), 10, 64)
		}
		switch {
		case e != nil && memory:
			err = fmt.Errorf("bad %s %q: want a size in bytes, as 512mb", name, *v[name])
		case e != nil:
			err = fmt.Errorf("bad %s %q: want an integer", name, *v[name])
		case n < 0 || n > most:
			err = fmt.Errorf("bad %s %q: want 0 to %d", name, *v[name], most)
		}
		return int(n)
	}
	cfg.Bind = *v["bind"]
	cfg.Port = num("port", false, 65535)
	cfg.UnixSocket = *v["unixsocket"]
	perm, e := strconv.ParseUint(strings.TrimSpace(*v["unixsocketperm"]), 8, 32)
	if e != nil || perm > 0o777 {
		return cfg, fmt.Errorf("bad unixsocketperm %q: want an octal mode, 0 to 777", *v["unixsocketperm"])
	}
	cfg.UnixSocketPerm = os.FileMode(perm)
	cfg.MaxClients = num("maxclients", false, math.MaxInt32)
	cfg.ProtoMaxBulkLen = num("proto-max-bulk-len", true, math.MaxInt)
	cfg.QueryBufferLimit = num("client-query-buffer-limit", true, math.MaxInt)
	cfg.Databases = num("databases", false, math.MaxInt32)
	cfg.TLSPort = num("tls-port", false, 65535)
	if err != nil {
		return cfg, err
	}
	if cfg.Port == 0 && cfg.UnixSocket == "" && cfg.TLSPort == 0 {
		// As Redis, which exits "Configured to not listen anywhere".
		return cfg, errors.New("configured to listen nowhere: port 0 is no TCP listener, and there is no unixsocket or tls-port")
	}
	cfg.TLSCertFile, cfg.TLSKeyFile = *v["tls-cert-file"], *v["tls-key-file"]
	cfg.TLSCACertFile, cfg.TLSAuthClients = *v["tls-ca-cert-file"], strings.TrimSpace(*v["tls-auth-clients"])
	switch strings.ToLower(*v["appendonly"]) {
	case "yes":
		cfg.AppendOnly = true
	case "no":
	default:
		return cfg, fmt.Errorf("bad appendonly %q: want yes or no", *v["appendonly"])
	}
	switch fsync := strings.ToLower(*v["appendfsync"]); fsync {
	case "always", "everysec", "no":
		cfg.AppendFsync = fsync
	default:
		return cfg, fmt.Errorf("bad appendfsync %q: want always, everysec or no", *v["appendfsync"])
	}
	cfg.RequirePass = *v["requirepass"]
	cfg.Dir = *v["dir"]
	cfg.AppendFilename = *v["appendfilename"]
	cfg.NotifyKeyspaceEvents = *v["notify-keyspace-events"]
	cfg.Settings = map[string]string{} // checked by kv.New, as CONFIG SET checks them
	for _, name := range []string{"slowlog-log-slower-than", "slowlog-max-len"} {
		cfg.Settings[name] = strings.TrimSpace(*v[name])
	}
	return cfg, nil
}

// parseMemory parses "512mb", "1gb", "100" as redis.conf does.
func parseMemory(s string) (int64, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			l, mult = strings.TrimSuffix(l, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(l, 10, 64)
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt64/mult || n < math.MinInt64/mult {
		return 0, fmt.Errorf("%q: %w", s, strconv.ErrRange)
	}
	return n * mult, nil
}

// logFile writes each line to the file at path, opened for it and closed
// after, as Redis writes its log: a log rotated by renaming it is made
// again at path by the next line.
type logFile struct {
	mu   sync.Mutex
	path string
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := f.Write(p)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// splitDirectives takes out of argv the redis.conf directives given as
// flags that evkv has none for ("--aof-load-truncated no", "--save 900 1
// 300 10"), as redis-server takes any directive on its command line: a
// directive's value is the arguments up to the next that starts with
// "--" (or what follows "=" in "--name=value"). It returns the rest of
// argv, for fs, and the directives by name.
func splitDirectives(fs *flag.FlagSet, argv []string) ([]string, map[string]string) {
	rest := make([]string, 0, len(argv))
	directives := map[string]string{}
	for i := 0; i < len(argv); i++ {
		name, ok := strings.CutPrefix(argv[i], "--")
		name, value, hasValue := strings.Cut(name, "=")
		if !ok || name == "" || fs.Lookup(name) != nil {
			rest = append(rest, argv[i])
			continue
		}
		if !hasValue {
			var words []string
			for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") {
				i++
				words = append(words, argv[i])
			}
			value = strings.Join(words, " ")
		}
		directives[strings.ToLower(name)] = value
	}
	return rest, directives
}
