/*
 * epoll_echo: a minimal single-threaded TCP echo server over epoll, the
 * efficiency ceiling for the Go implementations in bench/.
 *
 *   cc -O2 -o epoll_echo epoll_echo.c
 *   ./epoll_echo -addr 127.0.0.1:7000
 *
 * Level-triggered and non-blocking. Each readable connection is read once
 * per wake-up into one shared buffer and written straight back; whatever
 * the socket does not take is kept in that connection's own pending buffer,
 * and the connection then stops reading (EPOLLIN off, EPOLLOUT on) until the
 * pending bytes are flushed, so a slow reader cannot make the server buffer
 * without bound. SIGTERM or SIGINT makes it exit with status 0.
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
#include <unistd.h>

#define MAX_EVENTS 512
#define READ_BUF (64 * 1024)

struct conn {
	char *pending; /* bytes read but not yet written back */
	size_t len;    /* valid bytes in pending, starting at off */
	size_t off;
	size_t cap;
};

static volatile sig_atomic_t stopping;
static struct conn *conns; /* indexed by fd */
static int max_fds;
static char rbuf[READ_BUF];

static void on_signal(int sig) { (void)sig; stopping = 1; }

static void die(const char *what) { perror(what); exit(1); }

static void close_conn(int ep, int fd) {
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	free(conns[fd].pending);
	memset(&conns[fd], 0, sizeof conns[fd]);
}

static void watch(int ep, int op, int fd, unsigned events) {
	struct epoll_event ev = {.events = events, .data.fd = fd};
	if (epoll_ctl(ep, op, fd, &ev) < 0) die("epoll_ctl");
}

/* keep stores n bytes that the socket did not take. */
static int keep(struct conn *c, const char *p, size_t n) {
	if (c->cap < n) {
		char *b = realloc(c->pending, n);
		if (!b) return -1;
		c->pending = b;
		c->cap = n;
	}
	memcpy(c->pending, p, n);
	c->off = 0;
	c->len = n;
	return 0;
}

/* flush writes pending bytes; returns 1 when all are gone, 0 if the socket
 * is full, -1 on error. */
static int flush(int fd, struct conn *c) {
	while (c->len > 0) {
		ssize_t w = write(fd, c->pending + c->off, c->len);
		if (w < 0) {
			if (errno == EINTR) continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
			return -1;
		}
		c->off += (size_t)w;
		c->len -= (size_t)w;
	}
	return 1;
}

static void on_readable(int ep, int fd) {
	ssize_t n = read(fd, rbuf, sizeof rbuf);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		close_conn(ep, fd);
		return;
	}
	if (n < 0) return;
	size_t done = 0;
	while (done < (size_t)n) {
		ssize_t w = write(fd, rbuf + done, (size_t)n - done);
		if (w < 0) {
			if (errno == EINTR) continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) break;
			close_conn(ep, fd);
			return;
		}
		done += (size_t)w;
	}
	if (done < (size_t)n) {
		if (keep(&conns[fd], rbuf + done, (size_t)n - done) < 0) {
			close_conn(ep, fd);
			return;
		}
		watch(ep, EPOLL_CTL_MOD, fd, EPOLLOUT | EPOLLRDHUP);
	}
}

static void on_writable(int ep, int fd) {
	int r = flush(fd, &conns[fd]);
	if (r < 0) close_conn(ep, fd);
	else if (r == 1) watch(ep, EPOLL_CTL_MOD, fd, EPOLLIN | EPOLLRDHUP);
}

static void on_accept(int ep, int lfd) {
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR) continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
				perror("accept4"); /* EMFILE and the like: try again on the next wake-up */
			return;
		}
		if (fd >= max_fds) {
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		watch(ep, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP);
	}
}

static int listen_on(const char *addr) {
	char host[64];
	const char *colon = strrchr(addr, ':');
	if (!colon || (size_t)(colon - addr) >= sizeof host) {
		fprintf(stderr, "epoll_echo: bad -addr %s (want 127.0.0.1:PORT)\n", addr);
		exit(2);
	}
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(colon + 1))};
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 || (ntohl(sa.sin_addr.s_addr) >> 24) != 127) {
		fprintf(stderr, "epoll_echo: -addr must be a 127.0.0.0/8 address, got %s\n", addr);
		exit(2);
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) die("socket");
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) die("bind");
	if (listen(fd, 4096) < 0) die("listen");
	return fd;
}

int main(int argc, char **argv) {
	const char *addr = "127.0.0.1:7000";
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-addr") || !strcmp(argv[i], "--addr")) && i + 1 < argc) addr = argv[++i];
		else if (!strcmp(argv[i], "-loops") && i + 1 < argc) i++; /* accepted for symmetry; always 1 */
		else {
			fprintf(stderr, "usage: %s -addr 127.0.0.1:PORT\n", argv[0]);
			return 2;
		}
	}
	struct rlimit rl;
	max_fds = 1 << 16;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (1u << 20))
		max_fds = (int)rl.rlim_cur;
	conns = calloc((size_t)max_fds, sizeof *conns);
	if (!conns) die("calloc");

	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: epoll_wait returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int lfd = listen_on(addr);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) die("epoll_create1");
	watch(ep, EPOLL_CTL_ADD, lfd, EPOLLIN);

	struct epoll_event evs[MAX_EVENTS];
	while (!stopping) {
		int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR) continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			unsigned e = evs[i].events;
			if (fd == lfd) {
				on_accept(ep, lfd);
				continue;
			}
			if (e & EPOLLOUT) {
				on_writable(ep, fd);
				continue;
			}
			if (e & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) on_readable(ep, fd);
		}
	}
	close(lfd);
	close(ep);
	return 0;
}
