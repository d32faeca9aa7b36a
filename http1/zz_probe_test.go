package http1_test

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

var dateRe = regexp.MustCompile(`Date: [^\r]*\r\n`)

func rawExchange(addr, req string) string {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err.Error()
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(nc, req)
	b, err := io.ReadAll(nc)
	s := dateRe.ReplaceAllString(string(b), "")
	if err != nil {
		s += " ERR:" + err.Error()
	}
	return s
}

func TestProbeTwins(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/103", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</a>")
		w.WriteHeader(103)
		w.Header().Set("X", "1")
		io.WriteString(w, "hi")
	})
	mux.HandleFunc("/trailer-undeclared", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hi")
		w.Header().Set(http.TrailerPrefix+"Foo", "bar")
	})
	mux.HandleFunc("/trailer-declared-late", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hi")
		w.Header().Set("Trailer", "Foo")
		w.Header().Set("Foo", "bar")
	})
	mux.HandleFunc("/trailer-declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Foo, Content-Type")
		io.WriteString(w, "hi")
		w.Header().Set("Foo", "bar")
	})
	mux.HandleFunc("/trailer-prefix-early", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(http.TrailerPrefix+"Foo", "early")
		io.WriteString(w, "hi")
		w.Header().Set(http.TrailerPrefix+"Foo", "late")
	})
	mux.HandleFunc("/cl-short", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "hi")
	})
	mux.HandleFunc("/cl-long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1")
		_, err := io.WriteString(w, "hi")
		w.Header().Set("X-Err", "x")
		_ = err
	})
	mux.HandleFunc("/head-body", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("y", 100))
	})
	mux.HandleFunc("/head-flush", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "abc")
		w.(http.Flusher).Flush()
		io.WriteString(w, "def")
	})
	mux.HandleFunc("/wh-after-write", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "abc")
		w.WriteHeader(500)
	})
	mux.HandleFunc("/204-cl", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3")
		w.WriteHeader(204)
	})
	mux.HandleFunc("/304", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3")
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Etag", "x")
		w.WriteHeader(304)
	})
	mux.HandleFunc("/flush-empty", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
	})
	mux.HandleFunc("/te-identity", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Transfer-Encoding", "identity")
		io.WriteString(w, "abc")
	})
	mux.HandleFunc("/te-chunked-cl", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Transfer-Encoding", "chunked")
		w.Header().Set("Content-Length", "3")
		io.WriteString(w, "abc")
	})
	mux.HandleFunc("/conn-close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "abc")
	})
	mux.HandleFunc("/read-part", func(w http.ResponseWriter, r *http.Request) {
		r.Body.Read(make([]byte, 2))
		io.WriteString(w, "abc")
	})
	mux.HandleFunc("/200-then-100", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(100)
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	mux.HandleFunc("/hdr-100-ct", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/x")
		w.Header().Set("Content-Length", "2")
		w.WriteHeader(102)
		w.Write([]byte("ok"))
	})
	reqs := []string{
		"GET /103 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /103 HTTP/1.0\r\nHost: x\r\n\r\n",
		"GET /trailer-undeclared HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /trailer-declared-late HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /trailer-declared HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /trailer-prefix-early HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /cl-short HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /cl-long HTTP/1.1\r\nHost: x\r\n\r\n",
		"HEAD /head-body HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"HEAD /head-flush HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /wh-after-write HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /204-cl HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /304 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /flush-empty HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /te-identity HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /te-chunked-cl HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /conn-close HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /read-part HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nX-T: 1\r\n\r\nGET /conn-close HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /200-then-100 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
		"GET /hdr-100-ct HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	}
	tw := serveTwins(t, mux, nil, nil)
	for _, req := range reqs {
		a := rawExchange(tw[0].addr, req)
		b := rawExchange(tw[1].addr, req)
		mark := "same"
		if a != b {
			mark = "DIFF"
		}
		t.Logf("%s %q\n  ev:  %q\n  std: %q", mark, strings.SplitN(req, "\r\n", 2)[0], a, b)
	}
}
