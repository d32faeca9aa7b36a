package http1_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
)

// isDeadlineError reports whether err is what net/http's server gives a
// handler past its deadline: a net.Error that timed out, and
// os.ErrDeadlineExceeded.
func isDeadlineError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && errors.Is(err, os.ErrDeadlineExceeded)
}

// slowUpload posts size bytes to url with net/http's client: half of
// them, then, once stall is closed, the rest.
func slowUpload(t *testing.T, c *http.Client, url string, size int, stall <-chan struct{}) (*http.Response, string, error) {
	t.Helper()
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(strings.Repeat("a", size/2)))
		<-stall
		pw.Write([]byte(strings.Repeat("b", size-size/2)))
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", url, pr)
	req.ContentLength = int64(size)
	resp, err := c.Do(req)
	if err != nil {
		pr.CloseWithError(err)
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

// A handler's read deadline bounds its body's reads: a Read blocked when
// it passes fails with a timeout; set later, or cleared, it lets a slow
// upload outlast Server.ReadTimeout. The deadlines that fail a Read are
// set on a server whose ReadTimeout is a minute, which a Read that they
// left blocked would wait for.
func TestReadDeadline(t *testing.T) {
	srv := &http1.Server{ReadTimeout: time.Second}
	own := &http1.Server{ReadTimeout: time.Minute}
	readErrs := make(chan error, 4)
	read := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		readErrs <- err
		io.WriteString(w, r.URL.Path+" read "+strconv.Itoa(len(body)))
	}
	own.HandleFunc("/expires", func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
			t.Errorf("SetReadDeadline: %v", err)
		}
		read(w, r)
	})
	srv.HandleFunc("/extended", func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Minute))
		read(w, r)
	})
	srv.HandleFunc("/cleared", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		rc.SetReadDeadline(time.Time{})
		read(w, r)
	})
	own.HandleFunc("/passed", func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 100)
		io.ReadFull(r.Body, buf) // the first half has come
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(-time.Second))
		_, err := r.Body.Read(buf)
		readErrs <- err
	})
	srv.HandleFunc("/server-timeout", read)
	addr, ownAddr := serve(t, srv), serve(t, own)
	c := client(t)

	// readFails uploads to path, stalling halfway, and checks that the
	// handler's read fails with a deadline error within d.
	readFails := func(path string, d time.Duration) {
		t.Helper()
		stall := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			slowUpload(t, c, "http://"+ownAddr+path, 1000, stall)
		}()
		start := time.Now()
		err := recvErr(t, readErrs)
		took := time.Since(start)
		close(stall)
		<-done
		if !isDeadlineError(err) {
			t.Fatalf("%s: Read = %v, want a timeout with os.ErrDeadlineExceeded", path, err)
		}
		if took > d {
			t.Fatalf("%s: Read failed after %v, want within %v", path, took, d)
		}
	}
	// The deadline passes while the upload stalls: the blocked read fails,
	// at the loop's next check.
	readFails("/expires", 5*time.Second)
	// A deadline set when it has passed fails the next read at once,
	// whatever was received.
	readFails("/passed", 5*time.Second)

	// Uploads that stall for longer than ReadTimeout (1s, checked once a
	// second): without a deadline of the handler's, the read fails with a
	// timeout, as under net/http's server; with one extended or cleared,
	// the body is read whole.
	stall := make(chan struct{})
	type result struct {
		path   string
		status int
		body   string
		err    error
	}
	results := make(chan result, 3)
	paths := []string{"/extended", "/cleared", "/server-timeout"}
	for _, path := range paths {
		go func() {
			resp, body, err := slowUpload(t, c, "http://"+addr+path, 1000, stall)
			r := result{path: path, body: body, err: err}
			if resp != nil {
				r.status = resp.StatusCode
			}
			results <- r
		}()
	}
	// The stall lasts 3 s, and until an upload was cut: ReadTimeout's
	// check, once a second, may come later on a loaded machine. Until the
	// stall ends no Read but one cut can report.
	stallEnds := time.After(3 * time.Second)
	cut := 0
	for i := range paths {
		if i == 1 {
			<-stallEnds
			close(stall)
		}
		if err := recvErr(t, readErrs); err != nil {
			cut++
			if !isDeadlineError(err) {
				t.Fatalf("past ReadTimeout: Read = %v; want a timeout with os.ErrDeadlineExceeded", err)
			}
		}
	}
	if cut != 1 {
		t.Fatalf("%d uploads cut short, want 1 (the one bounded by ReadTimeout)", cut)
	}
	for range paths {
		r := <-results
		if r.path == "/server-timeout" {
			continue
		}
		if r.err != nil || r.status != 200 || r.body != r.path+" read 1000" {
			t.Fatalf("%s: %d %q %v", r.path, r.status, r.body, r.err)
		}
	}
}

func recvErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the handler did not report")
	}
	return nil
}

// A handler's write deadline bounds its answer: a write blocked on a
// client that does not read fails with a timeout when it passes, writes
// and flushes after it fail at once, and the connection is reset. Cleared
// or extended, it lets a slow handler answer; Server.WriteTimeout sets it
// for every pooled request.
func TestWriteDeadline(t *testing.T) {
	srv := &http1.Server{WriteTimeout: 500 * time.Millisecond}
	writeErrs := make(chan error, 1)
	srv.HandleFunc("/not-read", func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		chunk := []byte(strings.Repeat("z", 64<<10))
		var err error
		for i := 0; i < 1<<14 && err == nil; i++ { // at most 1 GiB
			_, err = w.Write(chunk)
		}
		writeErrs <- err
	})
	lateErrs := make(chan error, 2)
	srv.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetWriteDeadline(time.Now().Add(-time.Second))
		_, err := io.WriteString(w, "too late")
		lateErrs <- err
		lateErrs <- rc.Flush()
	})
	slow := func(w http.ResponseWriter, r *http.Request) {
		<-time.After(2500 * time.Millisecond) // past WriteTimeout, and two checks of it
		if _, err := io.WriteString(w, "slow "+r.URL.Path); err != nil {
			t.Errorf("%s: Write = %v", r.URL.Path, err)
		}
	}
	srv.HandleFunc("/slow-extended", func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute))
		slow(w, r)
	})
	srv.HandleFunc("/slow-cleared", func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).SetWriteDeadline(time.Time{})
		slow(w, r)
	})
	slowErrs := make(chan error, 1)
	srv.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-time.After(2500 * time.Millisecond)
		_, err := io.WriteString(w, "slow")
		slowErrs <- err
	})
	addr := serve(t, srv)

	t.Run("client not reading", func(t *testing.T) {
		t.Parallel()
		resp, err := client(t).Get("http://" + addr + "/not-read")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		start := time.Now()
		if err := recvErr(t, writeErrs); !isDeadlineError(err) {
			t.Fatalf("Write = %v, want a timeout with os.ErrDeadlineExceeded", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("Write failed after %v, with a deadline of 200ms", took)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err == nil {
			t.Fatal("the answer ended well after its deadline passed")
		}
	})
	t.Run("after the deadline", func(t *testing.T) {
		t.Parallel()
		if resp, err := client(t).Get("http://" + addr + "/late"); err == nil {
			resp.Body.Close()
			t.Fatalf("an answer written after its deadline arrived: %d", resp.StatusCode)
		}
		if err := recvErr(t, lateErrs); !isDeadlineError(err) {
			t.Fatalf("Write = %v, want a timeout", err)
		}
		if err := recvErr(t, lateErrs); !isDeadlineError(err) {
			t.Fatalf("Flush = %v, want a timeout", err)
		}
	})
	t.Run("WriteTimeout", func(t *testing.T) {
		t.Parallel()
		if resp, err := client(t).Get("http://" + addr + "/slow"); err == nil {
			resp.Body.Close()
			t.Fatalf("an answer written after WriteTimeout arrived: %d", resp.StatusCode)
		}
		if err := recvErr(t, slowErrs); !isDeadlineError(err) {
			t.Fatalf("Write = %v, want a timeout", err)
		}
	})
	for _, path := range []string{"/slow-extended", "/slow-cleared"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			resp, body := get(t, client(t), "http://"+addr+path)
			if resp.StatusCode != 200 || body != "slow "+path {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
		})
	}
}

// A read or write that waits for the client when its deadline passes
// fails then, woken by its own timer, not by the loop's check of the
// deadlines: the loop is held busy from before the deadline is set until
// the call returned, or for 30 s, by which the call may not wait for it.
func TestDeadlineWakesBlockedCall(t *testing.T) {
	const deadline = 50 * time.Millisecond
	const bound = 10 * time.Second // the loop is held for 30 s
	srv := &http1.Server{Engine: evloop.Options{Loops: 1}}
	took := make(chan time.Duration, 1)
	errs := make(chan error, 1)
	// hold holds the loop busy until release is called, or for 30 s.
	hold := func() (release func()) {
		held, released := make(chan struct{}), make(chan struct{})
		http1.SubmitOnLoop(srv, 0, func() {
			close(held)
			select {
			case <-released:
			case <-time.After(30 * time.Second):
			}
		})
		<-held
		return func() { close(released) }
	}
	srv.HandleFunc("/read", func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 100)
		io.ReadFull(r.Body, buf) // the first half has come; the rest stalls
		release := hold()
		start := time.Now()
		http.NewResponseController(w).SetReadDeadline(start.Add(deadline))
		_, err := io.ReadAll(r.Body)
		took <- time.Since(start)
		release()
		errs <- err
	})
	srv.HandleFunc("/write", func(w http.ResponseWriter, r *http.Request) {
		release := hold()
		start := time.Now()
		http.NewResponseController(w).SetWriteDeadline(start.Add(deadline))
		chunk := []byte(strings.Repeat("z", 64<<10))
		var err error
		for i := 0; i < 1<<14 && err == nil; i++ { // at most 1 GiB
			_, err = w.Write(chunk)
		}
		took <- time.Since(start)
		release()
		errs <- err
	})
	addr := serve(t, srv)
	c := client(t)
	check := func(what string) {
		t.Helper()
		d := <-took
		if err := recvErr(t, errs); !isDeadlineError(err) {
			t.Fatalf("%s: %v, want a timeout with os.ErrDeadlineExceeded", what, err)
		}
		if d < deadline || d > bound {
			t.Fatalf("%s failed after %v, with a deadline of %v", what, d, deadline)
		}
	}
	for range 4 {
		stall := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			slowUpload(t, c, "http://"+addr+"/read", 1000, stall)
		}()
		check("Read")
		close(stall)
		<-done
	}
	for range 4 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(nc, "GET /write HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
		check("Write")
		nc.Close()
	}
}
