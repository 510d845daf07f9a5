/* sock: every socket option and address helper, plus the one recvmsg wrapper that returns
 * a datagram with its kernel receive timestamp. Helpers return errors; callers log them. */
#ifndef BM_SOCK_H
#define BM_SOCK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/clock.h"

#define SOCK_ADDRSTRLEN (INET6_ADDRSTRLEN + 8)

int sock_set_nonblock(int fd);
int sock_set_nodelay(int fd);
int sock_set_notsent_lowat(int fd, int bytes);
/* Makes close() reset the connection and drop unsent data, so load stops at once. */
int sock_set_abortive_close(int fd);
/* Sets TCP_CONGESTION; returns 0 or -1 with errno (EPERM when not allowed unprivileged). With
 * CAP_NET_ADMIN (or CAP_SYS_MODULE) a name the kernel does not have loaded makes it try to
 * load module tcp_NAME: check remote-chosen names with sock_cc_available first. */
int sock_set_cc(int fd, const char *name);
/* Whether name is one of the words in list (blank-separated, as the kernel writes
 * tcp_available_congestion_control); 1 or 0. */
int sock_cc_listed(const char *list, const char *name);
/* Whether name is in /proc/sys/net/ipv4/tcp_available_congestion_control (the algorithms
 * built in or loaded now); 1 or 0 (also when the file cannot be read). */
int sock_cc_available(const char *name);
/* Marks the socket's packets with DSCP 0..63 (IP_TOS or IPV6_TCLASS by the socket's family);
 * dscp < 0 leaves the default. 0 or -1 with errno. */
int sock_set_dscp(int fd, int dscp);
/* Reads back the algorithm the socket really uses into buf. */
int sock_get_cc(int fd, char *buf, size_t len);
/* The TCP_INFO fields bloatmeter uses (glibc's struct tcp_info lags the kernel's). */
struct sock_tcp_stats {
	uint32_t snd_mss, rcv_mss;
	uint32_t rtt_us, min_rtt_us;
	uint32_t rcv_rtt_us;       /* the receiver's RTT estimate (a pure receiver's only one) */
	uint32_t snd_cwnd, total_retrans;
	int timestamps;            /* TCP timestamp option negotiated */
	int ecn;                   /* ECN negotiated at the handshake */
	int delivered_ce_known;    /* the kernel reports tcpi_delivered_ce (4.18+) */
	uint32_t delivered_ce;     /* packets the peer acknowledged as CE-marked (a sender's) */
	uint64_t delivered_bytes;  /* segments the peer acknowledged, SACKed ones included, × MSS
				    * (tcpi_delivered, 4.18+; 0 unknown): a sender's count that
				    * rises at the bottleneck's rate while it is busy */
	uint64_t delivery_rate;    /* bytes/s */
	uint64_t bytes_acked;
	uint64_t busy_us, rwnd_limited_us, sndbuf_limited_us;
	int bytes_known;           /* the kernel reports the next two (4.19+) */
	uint64_t bytes_sent;       /* payload sent, retransmissions included */
	uint64_t bytes_received;   /* payload received in order */
	uint32_t segs_out, segs_in;
};
int sock_tcp_info(int fd, struct sock_tcp_stats *st);

/* Running totals over load flows: what limited them and how often they retransmitted. */
struct tcp_totals {
	uint64_t retrans;
	uint64_t busy_us, rwnd_limited_us, sndbuf_limited_us;
	uint64_t delivered_bytes;  /* sock_tcp_stats.delivered_bytes summed */
};
/* Adds fd's TCP_INFO counters to t (nothing if TCP_INFO fails). */
void sock_tcp_totals_add(int fd, struct tcp_totals *t);
/* The same from a TCP_INFO reading the caller already has. */
void sock_tcp_totals_add_stats(const struct sock_tcp_stats *st, struct tcp_totals *t);
/* Keeps a bulk sender's unsent backlog near 5 ms of its delivery rate (at least 16 KiB), as
 * the responsiveness draft asks, so the tool adds no queue of its own. */
int sock_tune_notsent_lowat(int fd);
/* Asks for a receive buffer of bytes: SO_RCVBUFFORCE (with CAP_NET_ADMIN: past
 * net.core.rmem_max), else SO_RCVBUF (the kernel caps it at rmem_max). Returns the buffer the
 * socket has now in bytes (the kernel's doubled figure, what it counts queued packets
 * against), or -1 with errno. */
int sock_set_rcvbuf(int fd, int bytes);
/* Asks for kernel receive timestamps (SO_TIMESTAMPNS); returns the source future receives use. */
enum ts_source sock_enable_rx_timestamps(int fd);

/* Receives one datagram. Returns its length, or -1 (errno set; EMSGSIZE if truncated).
 * *rx_mono is the receive time on CLOCK_MONOTONIC and *src says who took it. */
ssize_t sock_recv_ts(int fd, void *buf, size_t cap, struct sockaddr_storage *peer,
		     socklen_t *peerlen, int64_t *rx_mono, enum ts_source *src);

/* One datagram of a batch (sock_recv_ts_batch, sock_send_batch). */
struct sock_dgram {
	void *buf;                     /* its bytes; the caller owns the storage */
	size_t cap;                    /* receive: room in buf */
	size_t len;                    /* receive: its length; send: bytes to send */
	struct sockaddr_storage peer;  /* receive: the sender; send: the destination */
	socklen_t peerlen;
	int64_t rx_mono;               /* receive: as sock_recv_ts */
	enum ts_source src;
	int truncated;                 /* receive: longer than cap (MSG_TRUNC): not to be used */
};
#define SOCK_BATCH_MAX 64

/* Receives up to n (≤ SOCK_BATCH_MAX) queued datagrams with one recvmmsg, without waiting,
 * each with its receive time as sock_recv_ts gives it. Returns how many (≥ 1), or -1 with
 * errno (EAGAIN: none queued). One system call for a batch: a reflector that makes one per
 * datagram spends most of its time entering the kernel (docs/scale.md). */
int sock_recv_ts_batch(int fd, struct sock_dgram *d, int n);
/* Sends d[0..n) (n ≤ SOCK_BATCH_MAX), each to its peer, with sendmmsg; a datagram the kernel
 * refuses is skipped (UDP: lost, as a dropped packet). Returns how many were sent. */
int sock_send_batch(int fd, const struct sock_dgram *d, int n);

/* Resolves host:port (numeric or name) for the given socket type; host NULL = wildcard. */
int sock_resolve(const char *host, uint16_t port, int socktype, struct sockaddr_storage *out,
		 socklen_t *outlen, char *err, size_t errlen);
/* Every address of host for port in getaddrinfo's order (RFC 6724 preference), of family
 * (AF_UNSPEC, AF_INET or AF_INET6), at most max of them into out/lens. Returns how many
 * (≥ 1), or -1 with one sentence in err. */
int sock_resolve_all(const char *host, uint16_t port, int socktype, int family,
		     struct sockaddr_storage *out, socklen_t *lens, int max, char *err,
		     size_t errlen);
/* Starts a non-blocking connect; returns the fd (connect in progress or done) or -1. */
int sock_connect_start(const struct sockaddr_storage *sa, socklen_t len);
/* The same from the local address local (-B; port 0), or from any when local is NULL or its
 * family is AF_UNSPEC. */
int sock_connect_start_from(const struct sockaddr_storage *sa, socklen_t len,
			    const struct sockaddr_storage *local);
/* Binds fd to local (port 0: the kernel picks one) before it connects; nothing when local
 * is NULL or AF_UNSPEC. 0, or -1 with errno (EAFNOSUPPORT: local is of another family). */
int sock_bind_local(int fd, const struct sockaddr_storage *local);
/* Parses a numeric IPv4 or IPv6 address (an IPv6 one may carry a %scope) into out, port 0.
 * 0, or -1 when s is not one. */
int sock_parse_ip(const char *s, struct sockaddr_storage *out);
/* After the fd became writable: 0 if connected, else -1 with errno = the connect error. */
int sock_connect_result(int fd);
/* Non-blocking connect bounded by timeout_ms; returns a non-blocking fd or -1 with err set. */
int sock_connect_tcp(const struct sockaddr_storage *sa, socklen_t len, int timeout_ms, char *err,
		     size_t errlen);
/* Listening TCP / bound UDP socket; bind_addr NULL = dual-stack wildcard. Non-blocking. */
int sock_listen_tcp(const char *bind_addr, uint16_t port, char *err, size_t errlen);
int sock_bind_udp(const char *bind_addr, uint16_t port, char *err, size_t errlen);

/* "ip:port" / "[ip6]:port"; sock_ip_str gives the address alone (IPv4-mapped as IPv4). */
void sock_addr_str(const struct sockaddr *sa, char *buf, size_t len);
void sock_ip_str(const struct sockaddr *sa, char *buf, size_t len);
/* True if both addresses are the same IP (IPv4-mapped IPv6 equals plain IPv4). */
int sock_same_ip(const struct sockaddr *a, const struct sockaddr *b);
/* Same client for per-client limits: the same IPv4 address (also IPv4-mapped), or the same
 * IPv6 /64 — one home network gets a /64, and picking new addresses inside it is free. */
int sock_same_client(const struct sockaddr *a, const struct sockaddr *b);
uint16_t sock_port(const struct sockaddr *sa);

/* Waits until fd is ready for events (POLLIN / POLLOUT) or deadline_ns (CLOCK_MONOTONIC)
 * passes; EINTR restarts. 0 ready, or -1 with errno (ETIMEDOUT at the deadline). */
int sock_wait(int fd, short events, int64_t deadline_ns);
/* Blocking-style I/O on a non-blocking socket until deadline_ns: all len bytes, or -1 with
 * errno (ETIMEDOUT; ECONNRESET when the peer closed before len bytes arrived). */
int sock_send_all(int fd, const void *buf, size_t len, int64_t deadline_ns);
int sock_recv_all(int fd, void *buf, size_t len, int64_t deadline_ns);

/* Bytes per second each of nflows flows may send so that together they stay at max_bps
 * (bits/s); 0 when there is no cap or no flow. */
uint64_t sock_pacing_share(uint64_t max_bps, int nflows);
/* Sets SO_MAX_PACING_RATE on fd to bytes_per_s, or lifts the cap for 0. Linux TCP paces by
 * itself when no fq qdisc is on the path (kernel commit 218af599fa63, "tcp: internal
 * implementation for pacing", Linux 4.13); either way the cap counts TCP payload only. Values
 * above 2^32 - 2 bytes/s (34 Gbit/s) are capped there (the 32-bit form every kernel takes).
 * 0 or -1 with errno. */
int sock_set_pacing(int fd, uint64_t bytes_per_s);

#endif
