// Package proc starts the servers the benchmark harnesses compare and
// reads what the kernel says they used: CPU time and resident memory.
package proc

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FreePort returns a loopback port nothing listens on.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Start runs argv (on CPU 0 if pin) and waits until addr accepts
// connections.
func Start(argv []string, addr string, pin bool) (*exec.Cmd, error) {
	return StartLogged(argv, addr, pin, io.Discard)
}

// StartLogged is Start with the program's standard output and error going
// to log.
func StartLogged(argv []string, addr string, pin bool, log io.Writer) (*exec.Cmd, error) {
	if pin {
		argv = append([]string{"taskset", "-c", "0"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd, nil
		}
	}
	Stop(cmd)
	return nil, fmt.Errorf("%s did not start listening on %s", argv[0], addr)
}

// Stop kills cmd and waits for it.
func Stop(cmd *exec.Cmd) {
	cmd.Process.Kill()
	cmd.Wait()
}

// ClockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat.
var ClockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && v > 0 {
			return float64(v)
		}
	}
	return 100
}()

// CPUTime returns the user+system CPU time of process pid and all its
// threads, in seconds, from /proc/PID/stat (utime and stime, fields 14
// and 15).
func CPUTime(pid int) (float64, error) {
	user, system, err := CPUTimes(pid)
	return user + system, err
}

// CPUTimes returns the user and the system CPU time of process pid and
// all its threads, in seconds, apart: where a server's time goes, its own
// code or the kernel's work for it.
func CPUTimes(pid int) (user, system float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return float64(ut) / ClockTicks, float64(st) / ClockTicks, nil
}

// RSSKiB returns VmRSS of process pid, in KiB, from /proc/PID/status.
func RSSKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if fs := strings.Fields(rest); len(fs) >= 1 {
				return strconv.ParseInt(fs[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// Median returns the median of v (0 if empty).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Build builds the Go package pkg into a temporary directory and returns
// the binary's path; remove its directory when done.
func Build(pkg string) (string, error) { return BuildIn("", pkg) }

// BenchRoot finds the bench module's directory from the working
// directory up: the commands that build its C servers run inside bench/.
func BenchRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/evloop/evloop/bench\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run inside bench/ (no github.com/evloop/evloop/bench go.mod above %s)", dir)
		}
	}
}

// BuildIn is Build run in directory src: with the go.mod found from
// there, so that a program of the evloop module (cmd/evgate) is built with
// the dependencies it ships with rather than the bench module's.
func BuildIn(src, pkg string) (string, error) {
	dir, err := os.MkdirTemp("", "bench")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, path.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// MedianOf returns the median of f over rs: one field of several runs'
// results.
func MedianOf[T any](rs []T, f func(T) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	return Median(v)
}

// WaitDue waits until due, the time an open load's next request is due,
// and returns the time its latency counts from: due if it is late (for
// want of the answer before it, so a server that falls behind shows it,
// as wrk2 counts), else when the wait ended (the runtime's timers wake up
// to a millisecond late, which would count against every server alike).
func WaitDue(due time.Time) time.Time {
	d := time.Until(due)
	if d <= 0 {
		return due
	}
	time.Sleep(d)
	return time.Now()
}

// MakeCertificate writes a self-signed certificate for 127.0.0.1 and
// localhost (ECDSA P-256) and its key into dir as cert.pem and key.pem,
// with Go's own generator (crypto/tls/generate_cert.go), for the loads run
// over TLS.
func MakeCertificate(dir string) error {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return err
	}
	gen := filepath.Join(strings.TrimSpace(string(goroot)), "src", "crypto", "tls", "generate_cert.go")
	cmd := exec.Command("go", "run", gen, "--host", "127.0.0.1,localhost", "--ecdsa-curve", "P256")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("generate_cert.go: %v\n%s", err, out)
	}
	return nil
}
