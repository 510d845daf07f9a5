/* pcap: opens and filters the capture, runs a poll loop on libpcap's descriptor and a stop
 * pipe on its own thread, and hands every packet (monotonic time) to the analyzer and, when
 * asked, to a dump file. Nothing else touches the analyzer until the thread is joined. */
#include "probes/pcap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/route.h"

#define PCAP_BUFFER_BYTES (8 << 20) /* ~30 k records of 192 bytes: a burst at 10 Gbit/s */
#define PCAP_POLL_MS 200            /* belt and braces: the stop pipe wakes the loop at once */
#define PCAP_DRAIN_ROUNDS 64        /* at stop: what the kernel holds, not a live stream */

struct pcap_capture {
	pcap_t *p;
	pcap_dumper_t *dumper;
	struct pa *pa;
	int linktype;
	int nano;
	int stop_pipe[2];
	pthread_t thread;
	int running;               /* the thread was started and not yet joined */
	int closed;                /* stop ran */
	uint64_t packets, drops;
	char ifname[IF_NAMESIZE];
	char error[256];
};

static void pcap_capture_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *data)
{
	struct pcap_capture *c = (struct pcap_capture *)user;
	int64_t real = (int64_t)h->ts.tv_sec * NS_PER_SEC +
		       (c->nano ? (int64_t)h->ts.tv_usec : (int64_t)h->ts.tv_usec * 1000);

	c->packets++;
	/* The kernel stamps in CLOCK_REALTIME; probes use CLOCK_MONOTONIC. */
	pa_packet(c->pa, c->linktype, clock_real_to_mono(real), data, h->caplen, h->len);
	if (c->dumper != NULL)
		pcap_dump((u_char *)c->dumper, h, data);
}

/* Returns -1 (error recorded) or the packets dispatched. */
static int pcap_capture_dispatch(struct pcap_capture *c)
{
	int n = pcap_dispatch(c->p, -1, pcap_capture_packet, (u_char *)c);

	if (n == PCAP_ERROR)
		snprintf(c->error, sizeof(c->error), "packet capture failed: %s", pcap_geterr(c->p));
	return n < 0 ? -1 : n;
}

static void *pcap_capture_thread(void *arg)
{
	struct pcap_capture *c = arg;
	struct pollfd pfd[2] = {
		{ .fd = pcap_get_selectable_fd(c->p), .events = POLLIN },
		{ .fd = c->stop_pipe[0], .events = POLLIN },
	};

	for (;;) {
		int n = poll(pfd, 2, PCAP_POLL_MS);

		if (n < 0 && errno != EINTR) {
			snprintf(c->error, sizeof(c->error), "packet capture failed: poll: %s",
				 strerror(errno));
			return NULL;
		}
		if (pfd[1].revents != 0)
			break;
		if (pcap_capture_dispatch(c) < 0)
			return NULL;
	}
	/* What the kernel already holds belongs to the test too. */
	for (int i = 0; i < PCAP_DRAIN_ROUNDS; i++)
		if (pcap_capture_dispatch(c) <= 0)
			break;
	return NULL;
}

/* "tcp port 4750 or udp port 4750 ..." */
int pcap_capture_filter(const struct pcap_capture_config *cfg, char *buf, size_t len)
{
	char srv[INET6_ADDRSTRLEN], cli[INET6_ADDRSTRLEN] = "", ports[160];
	const void *a;
	int n;

	if (cfg->server.ss_family == AF_INET)
		a = &((const struct sockaddr_in *)&cfg->server)->sin_addr;
	else if (cfg->server.ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)&cfg->server)->sin6_addr;
	else
		return -1;
	if (inet_ntop(cfg->server.ss_family, a, srv, sizeof(srv)) == NULL)
		return -1;
	/* An IPv4-mapped server is reached over IPv4 on the wire. */
	if (strncmp(srv, "::ffff:", 7) == 0 && strchr(srv + 7, '.') != NULL)
		memmove(srv, srv + 7, strlen(srv + 7) + 1);
	if (cfg->client.ss_family == AF_INET || cfg->client.ss_family == AF_INET6) {
		a = cfg->client.ss_family == AF_INET
			    ? (const void *)&((const struct sockaddr_in *)&cfg->client)->sin_addr
			    : (const void *)&((const struct sockaddr_in6 *)&cfg->client)->sin6_addr;
		if (inet_ntop(cfg->client.ss_family, a, cli, sizeof(cli)) == NULL)
			return -1;
		if (strncmp(cli, "::ffff:", 7) == 0 && strchr(cli + 7, '.') != NULL)
			memmove(cli, cli + 7, strlen(cli + 7) + 1);
	}
	n = snprintf(ports, sizeof(ports), "tcp port %u", cfg->tcp_port);
	if (cfg->udp_port != 0)
		n += snprintf(ports + n, sizeof(ports) - (size_t)n, " or udp port %u", cfg->udp_port);
	if (cfg->dns_port != 0)
		snprintf(ports + n, sizeof(ports) - (size_t)n, " or port %u", cfg->dns_port);
	if (cli[0] != '\0')
		n = snprintf(buf, len, "host %s and host %s and (%s)", srv, cli, ports);
	else
		n = snprintf(buf, len, "host %s and (%s)", srv, ports);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The interface the kernel would send to the server through. */
static int pcap_capture_route_if(const struct pcap_capture_config *cfg, char *ifname,
				 size_t len, char *err, size_t errlen)
{
	struct route_info ri;

	if (route_lookup(&cfg->server, &ri, err, errlen) != 0)
		return -1;
	if (ri.ifname[0] == '\0') {
		snprintf(err, errlen, "the kernel names no interface towards the server, so there "
			 "is nothing to capture on.");
		return -1;
	}
	snprintf(ifname, len, "%s", ri.ifname);
	return 0;
}

/* One sentence for pcap_activate's failure. */
static void pcap_capture_activate_error(pcap_t *p, int rc, const char *ifname, char *err,
					size_t errlen)
{
	switch (rc) {
	case PCAP_ERROR_PERM_DENIED:
		snprintf(err, errlen, "capturing packets on %s needs root or CAP_NET_RAW "
			 "(libpcap: %s).", ifname, pcap_geterr(p));
		break;
	case PCAP_ERROR_NO_SUCH_DEVICE:
		snprintf(err, errlen, "there is no network interface named %s to capture on.",
			 ifname);
		break;
	case PCAP_ERROR_IFACE_NOT_UP:
		snprintf(err, errlen, "interface %s is down, so there is nothing to capture.",
			 ifname);
		break;
	default:
		snprintf(err, errlen, "cannot capture on %s: %s.", ifname, pcap_geterr(p));
	}
}

/* Creates and activates the handle with the capture settings. 0 or -1 with err. */
static int pcap_capture_open(struct pcap_capture *c, char *err, size_t errlen)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	int rc;

	c->p = pcap_create(c->ifname, errbuf);
	if (c->p == NULL) {
		snprintf(err, errlen, "cannot capture on %s: %s.", c->ifname, errbuf);
		return -1;
	}
	if (pcap_set_snaplen(c->p, PCAP_CAPTURE_SNAPLEN) != 0 ||
	    pcap_set_immediate_mode(c->p, 1) != 0 ||
	    pcap_set_buffer_size(c->p, PCAP_BUFFER_BYTES) != 0) {
		snprintf(err, errlen, "cannot configure the capture on %s.", c->ifname);
		return -1;
	}
	c->nano = pcap_set_tstamp_precision(c->p, PCAP_TSTAMP_PRECISION_NANO) == 0;
	rc = pcap_activate(c->p);
	if (rc < 0) {
		pcap_capture_activate_error(c->p, rc, c->ifname, err, errlen);
		return -1;
	}
	if (rc > 0)
		log_info("capture on %s: %s", c->ifname, pcap_geterr(c->p));
	c->nano = pcap_get_tstamp_precision(c->p) == PCAP_TSTAMP_PRECISION_NANO;
	if (!c->nano)
		log_info("capture on %s: microsecond timestamps only (no nanosecond support)",
			 c->ifname);
	c->linktype = pcap_datalink(c->p);
	if (!pa_linktype_supported(c->linktype)) {
		snprintf(err, errlen, "interface %s has link type %s, which the analyzer does not "
			 "read.", c->ifname, pcap_datalink_val_to_name(c->linktype) ?
			 pcap_datalink_val_to_name(c->linktype) : "unknown");
		return -1;
	}
	return 0;
}

static int pcap_capture_set_filter(struct pcap_capture *c, const struct pcap_capture_config *cfg,
				   char *err, size_t errlen)
{
	char filter[512];
	struct bpf_program prog;
	int rc;

	if (pcap_capture_filter(cfg, filter, sizeof(filter)) != 0) {
		snprintf(err, errlen, "the capture needs the server's IP address.");
		return -1;
	}
	if (pcap_compile(c->p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		snprintf(err, errlen, "cannot compile the capture filter \"%s\": %s.", filter,
			 pcap_geterr(c->p));
		return -1;
	}
	rc = pcap_setfilter(c->p, &prog);
	pcap_freecode(&prog);
	if (rc != 0) {
		snprintf(err, errlen, "cannot set the capture filter: %s.", pcap_geterr(c->p));
		return -1;
	}
	log_debug("capture on %s: filter %s", c->ifname, filter);
	return 0;
}

static int pcap_capture_prepare(struct pcap_capture *c, const struct pcap_capture_config *cfg,
				char *err, size_t errlen)
{
	struct pa_config pc;
	char errbuf[PCAP_ERRBUF_SIZE];

	memset(&pc, 0, sizeof(pc));
	pc.server = cfg->server;
	pc.client = cfg->client;
	pc.server_ports[0] = cfg->tcp_port;
	pc.server_ports[1] = cfg->udp_port;
	pc.server_ports[2] = cfg->dns_port;
	c->pa = pa_new(&pc);
	if (c->pa == NULL) {
		snprintf(err, errlen, "out of memory for the capture analyzer.");
		return -1;
	}
	if (pcap_capture_open(c, err, errlen) != 0 || pcap_capture_set_filter(c, cfg, err, errlen) != 0)
		return -1;
	if (pcap_setnonblock(c->p, 1, errbuf) != 0) {
		snprintf(err, errlen, "cannot make the capture non-blocking: %s.", errbuf);
		return -1;
	}
	if (pcap_get_selectable_fd(c->p) < 0) {
		snprintf(err, errlen, "the capture on %s offers no descriptor to wait on.", c->ifname);
		return -1;
	}
	if (cfg->save_file != NULL) {
		c->dumper = pcap_dump_open(c->p, cfg->save_file);
		if (c->dumper == NULL) {
			snprintf(err, errlen, "cannot write the capture to %s: %s.", cfg->save_file,
				 pcap_geterr(c->p));
			return -1;
		}
	}
	if (pipe2(c->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(err, errlen, "cannot create the capture's stop pipe: %s.", strerror(errno));
		c->stop_pipe[0] = c->stop_pipe[1] = -1;
		return -1;
	}
	return 0;
}

struct pcap_capture *pcap_capture_start(const struct pcap_capture_config *cfg, char *err,
					size_t errlen)
{
	struct pcap_capture *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL) {
		snprintf(err, errlen, "out of memory for the capture.");
		return NULL;
	}
	c->stop_pipe[0] = c->stop_pipe[1] = -1;
	if (cfg->ifname != NULL)
		snprintf(c->ifname, sizeof(c->ifname), "%s", cfg->ifname);
	else if (pcap_capture_route_if(cfg, c->ifname, sizeof(c->ifname), err, errlen) != 0)
		goto fail;
	if (pcap_capture_prepare(c, cfg, err, errlen) != 0)
		goto fail;
	rc = pthread_create(&c->thread, NULL, pcap_capture_thread, c);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the capture thread: %s.", strerror(rc));
		goto fail;
	}
	c->running = 1;
	log_debug("capturing on %s (%s timestamps)", c->ifname, c->nano ? "ns" : "µs");
	return c;
fail:
	pcap_capture_free(c);
	return NULL;
}

void pcap_capture_stop(struct pcap_capture *c)
{
	struct pcap_stat st;

	if (c == NULL || c->closed)
		return;
	c->closed = 1;
	if (c->running) {
		if (write(c->stop_pipe[1], "x", 1) != 1)
			log_warn("cannot wake the capture thread");
		pthread_join(c->thread, NULL);
		c->running = 0;
	}
	if (c->p != NULL && pcap_stats(c->p, &st) == 0)
		c->drops = (uint64_t)st.ps_drop + st.ps_ifdrop;
	if (c->dumper != NULL) {
		if (pcap_dump_flush(c->dumper) != 0)
			log_warnx("the saved capture may be incomplete (cannot flush it)");
		pcap_dump_close(c->dumper);
		c->dumper = NULL;
	}
	if (c->p != NULL) {
		pcap_close(c->p);
		c->p = NULL;
	}
	for (int i = 0; i < 2; i++) {
		if (c->stop_pipe[i] >= 0)
			close(c->stop_pipe[i]);
		c->stop_pipe[i] = -1;
	}
}

struct pa *pcap_capture_analyzer(struct pcap_capture *c)
{
	return c->pa;
}

uint64_t pcap_capture_drops(const struct pcap_capture *c)
{
	return c->drops;
}

uint64_t pcap_capture_packets(const struct pcap_capture *c)
{
	return c->packets;
}

int pcap_capture_nano(const struct pcap_capture *c)
{
	return c->nano;
}

const char *pcap_capture_ifname(const struct pcap_capture *c)
{
	return c->ifname;
}

const char *pcap_capture_error(const struct pcap_capture *c)
{
	return c->error[0] ? c->error : NULL;
}

void pcap_capture_free(struct pcap_capture *c)
{
	if (c == NULL)
		return;
	pcap_capture_stop(c);
	pa_free(c->pa);
	free(c);
}
