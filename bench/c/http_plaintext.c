/*
 * http_plaintext: a minimal single-threaded HTTP/1.1 server over epoll that
 * answers every request with TechEmpower's plaintext answer: the floor of
 * what a server that reads and writes once per wake-up can cost, for
 * cmd/httpbench to set beside the Go servers.
 *
 *   cc -O2 -o http_plaintext http_plaintext.c
 *   ./http_plaintext -addr 127.0.0.1:8080
 *
 * Edge-triggered and non-blocking, as evloop's loops are. A request is a
 * head ending in CRLF CRLF; nothing else of it is looked at, so the server
 * suits GET loads such as wrk's and nothing more: a head longer than the
 * connection's buffer closes the connection, and a body would be taken
 * for heads. The answers to every head read in one wake-up go out in one
 * write; what the socket does not take waits in the connection's own
 * buffer, and the connection is not read until it is flushed. The Date
 * field is formatted once a second. SIGTERM or SIGINT makes it exit with
 * status 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 512
#define READ_BUF (64 * 1024)
#define HEAD_MAX 8192

struct conn {
	char head[HEAD_MAX]; /* the start of a head not yet complete */
	size_t head_len;
	char *pending; /* answers the socket did not take */
	size_t len, off, cap;
	int open;
};

static volatile sig_atomic_t stopping;
static struct conn **conns; /* indexed by fd */
static int max_fds;
static char rbuf[READ_BUF];
static char *wbuf; /* the answers of one wake-up */
static size_t wbuf_cap;

static char answer[256];
static size_t answer_len;
static time_t answer_time;

static void on_signal(int sig) { (void)sig; stopping = 1; }

static void die(const char *what) { perror(what); exit(1); }

/* format_answer builds the answer for the current second. */
static void format_answer(time_t now) {
	char date[64];
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	answer_len = (size_t)snprintf(answer, sizeof answer,
		"HTTP/1.1 200 OK\r\nDate: %s\r\nServer: c\r\nContent-Type: text/plain\r\n"
		"Content-Length: 13\r\n\r\nHello, World!", date);
	answer_time = now;
}

static void close_conn(int ep, int fd) {
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	free(conns[fd]->pending);
	free(conns[fd]);
	conns[fd] = NULL;
}

static void watch(int ep, int op, int fd, unsigned events) {
	struct epoll_event ev = {.events = events, .data.fd = fd};
	if (epoll_ctl(ep, op, fd, &ev) < 0) die("epoll_ctl");
}

/* send_all writes b[0:n]; it returns -1 if the connection failed, and keeps
 * what the socket did not take. */
static int send_all(int ep, int fd, struct conn *c, const char *b, size_t n) {
	ssize_t w = n ? write(fd, b, n) : 0;
	if (w < 0) {
		if (errno != EAGAIN) return -1;
		w = 0;
	}
	if ((size_t)w == n) return 0;
	n -= (size_t)w;
	if (n > c->cap) {
		c->pending = realloc(c->pending, n);
		if (c->pending == NULL) die("realloc");
		c->cap = n;
	}
	memcpy(c->pending, b + w, n);
	c->len = n;
	c->off = 0;
	watch(ep, EPOLL_CTL_MOD, fd, EPOLLOUT | EPOLLET);
	return 0;
}

/* flush writes what waits; once it is all out, the connection is read
 * again. */
static int flush(int ep, int fd, struct conn *c) {
	while (c->len > 0) {
		ssize_t w = write(fd, c->pending + c->off, c->len);
		if (w < 0) return errno == EAGAIN ? 0 : -1;
		c->off += (size_t)w;
		c->len -= (size_t)w;
	}
	watch(ep, EPOLL_CTL_MOD, fd, EPOLLIN | EPOLLRDHUP | EPOLLET);
	return 1;
}

/* serve counts the heads in what was read, after any partial head kept
 * from before, and answers them. It returns -1 to close. */
static int serve(int ep, int fd, struct conn *c, const char *b, size_t n) {
	size_t heads = 0;
	/* A partial head: complete it from the new bytes first. */
	while (c->head_len > 0 && n > 0) {
		if (c->head_len == HEAD_MAX) return -1;
		c->head[c->head_len++] = *b++;
		n--;
		if (c->head_len >= 4 && memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4) == 0) {
			c->head_len = 0;
			heads++;
		}
	}
	const char *p = b, *end = b + n;
	for (;;) {
		const char *e = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		if (e == NULL) break;
		heads++;
		p = e + 4;
	}
	if (p < end) {
		size_t rest = (size_t)(end - p);
		if (rest > HEAD_MAX) return -1;
		memcpy(c->head, p, rest);
		c->head_len = rest;
	}
	if (heads == 0) return 0;
	if (heads * answer_len > wbuf_cap) {
		wbuf_cap = heads * answer_len;
		wbuf = realloc(wbuf, wbuf_cap);
		if (wbuf == NULL) die("realloc");
	}
	for (size_t i = 0; i < heads; i++) memcpy(wbuf + i * answer_len, answer, answer_len);
	return send_all(ep, fd, c, wbuf, heads * answer_len);
}

static void on_readable(int ep, int fd, struct conn *c) {
	for (;;) {
		ssize_t n = read(fd, rbuf, sizeof rbuf);
		if (n == 0) break;
		if (n < 0) {
			if (errno == EAGAIN) return;
			break;
		}
		if (serve(ep, fd, c, rbuf, (size_t)n) < 0) break;
		if (c->len > 0) return; /* read again once flushed */
		/* A short read took everything there was; edge-triggered, more
		 * bytes are a new event. */
		if ((size_t)n < sizeof rbuf) return;
	}
	close_conn(ep, fd);
}

static void accept_all(int ep, int lfd) {
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) return;
			if (errno == EMFILE || errno == ENFILE) return;
			die("accept4");
		}
		if (fd >= max_fds) {
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		conns[fd] = calloc(1, sizeof(struct conn));
		if (conns[fd] == NULL) die("calloc");
		watch(ep, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP | EPOLLET);
	}
}

int main(int argc, char **argv) {
	const char *addr = "127.0.0.1:8080";
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-addr") == 0) addr = argv[i + 1];
		else {
			fprintf(stderr, "usage: %s [-addr host:port]\n", argv[0]);
			return 2;
		}
	}
	char host[64];
	const char *colon = strrchr(addr, ':');
	if (colon == NULL || (size_t)(colon - addr) >= sizeof host) {
		fprintf(stderr, "bad -addr %s\n", addr);
		return 2;
	}
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;

	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) die("getrlimit");
	max_fds = (int)rl.rlim_cur;
	conns = calloc((size_t)max_fds, sizeof *conns);
	if (conns == NULL) die("calloc");

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0) die("socket");
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", host);
		return 2;
	}
	if (bind(lfd, (struct sockaddr *)&sin, sizeof sin) < 0) die("bind");
	if (listen(lfd, 4096) < 0) die("listen");

	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) die("epoll_create1");
	watch(ep, EPOLL_CTL_ADD, lfd, EPOLLIN);
	format_answer(time(NULL));

	struct epoll_event events[MAX_EVENTS];
	while (!stopping) {
		int n = epoll_wait(ep, events, MAX_EVENTS, 1000);
		if (n < 0) {
			if (errno == EINTR) continue;
			die("epoll_wait");
		}
		time_t now = time(NULL);
		if (now != answer_time) format_answer(now);
		for (int i = 0; i < n; i++) {
			int fd = events[i].data.fd;
			if (fd == lfd) {
				accept_all(ep, lfd);
				continue;
			}
			struct conn *c = conns[fd];
			if (c == NULL) continue;
			if (events[i].events & EPOLLOUT) {
				int r = flush(ep, fd, c);
				if (r < 0) {
					close_conn(ep, fd);
					continue;
				}
				if (r == 0) continue;
				/* Flushed: what arrived meanwhile raised no new edge. */
				on_readable(ep, fd, c);
				continue;
			}
			if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(ep, fd, c);
		}
	}
	return 0;
}
