// SPDX-License-Identifier: GPL-2.0-only
/*
 * Check the invariant CRC of every RoCEv2 frame in a pcap file.
 *
 *   icrc_check [--verbose] FILE.pcap
 *
 * tshark 4.0's InfiniBand dissector shows the ICRC but does not verify
 * it; this program does, straight from the definition (IBTA vol. 1
 * 7.8.1, annex A17) and independently of dray's own ICRC code: CRC-32
 * (the Ethernet one: reflected polynomial 0xedb88320, initial value all
 * ones, result inverted) over
 *
 *   8 bytes of ones (the pseudo LRH),
 *   the IP header with the fields a router may change taken as ones
 *     (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label,
 *     hop limit),
 *   the UDP header with its checksum taken as ones,
 *   the BTH with its resv8a byte (FECN, BECN) taken as ones,
 *   everything after the BTH up to the ICRC (pad bytes included);
 *
 * the ICRC is the last 4 bytes of the UDP payload, least significant byte
 * first. Frames are Ethernet (optionally 802.1Q), Linux cooked (SLL) or
 * SLL2 captures; IPv4 without options or IPv6 without extension headers,
 * UDP destination port 4791. Anything else is not counted.
 *
 * Prints one line per source address (frames, correct, wrong, truncated)
 * and the first wrong frames in detail. Exit status: 0 when at least one
 * RoCEv2 frame was found and every one has a correct ICRC and was
 * captured whole; 1 otherwise; 2 for bad usage or an unreadable file.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROCE_PORT	4791
#define MAX_SRC		16
#define MAX_SHOWN	10
#define BTH_LEN		12
#define UDP_LEN		8

struct src_stats {
	char addr[INET6_ADDRSTRLEN];
	unsigned long frames, good, bad, truncated;
};

static struct src_stats srcs[MAX_SRC];
static int nsrc;
static unsigned long shown;
static bool verbose;
static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t i, c;
	int k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xedb88320U : c >> 1;
		crc_table[i] = c;
	}
}

/* CRC-32 state update (no inversion here). */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = (crc >> 8) ^ crc_table[(crc ^ *p++) & 0xff];
	return crc;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | p[0];
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static struct src_stats *src_of(const char *addr)
{
	int i;

	for (i = 0; i < nsrc; i++)
		if (!strcmp(srcs[i].addr, addr))
			return &srcs[i];
	if (nsrc == MAX_SRC)
		return &srcs[MAX_SRC - 1];
	snprintf(srcs[nsrc].addr, sizeof(srcs[nsrc].addr), "%s", addr);
	return &srcs[nsrc++];
}

/*
 * ICRC of the packet at @l3 (IP header, @l3_len bytes) whose UDP header
 * and payload (@udp_len bytes, ICRC included) follow it.
 */
static uint32_t icrc(const uint8_t *l3, size_t l3_len, bool ipv6,
		     size_t udp_len)
{
	static const uint8_t ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	uint8_t hdr[40 + UDP_LEN + BTH_LEN];
	size_t fixed = l3_len + UDP_LEN + BTH_LEN;
	uint32_t crc;

	memcpy(hdr, l3, fixed);
	if (ipv6) {
		hdr[0] |= 0x0f;
		hdr[1] = hdr[2] = hdr[3] = 0xff;
		hdr[7] = 0xff;
	} else {
		hdr[1] = 0xff;
		hdr[8] = 0xff;
		hdr[10] = hdr[11] = 0xff;
	}
	hdr[l3_len + 6] = hdr[l3_len + 7] = 0xff;
	hdr[l3_len + UDP_LEN + 4] = 0xff;

	crc = crc_update(0xffffffffU, ones, sizeof(ones));
	crc = crc_update(crc, hdr, fixed);
	crc = crc_update(crc, l3 + fixed, udp_len - UDP_LEN - BTH_LEN - 4);
	return ~crc;
}

/* One frame from its network header: @proto is the ethertype. */
static void check_frame(unsigned long no, uint16_t proto, const uint8_t *p,
		  size_t caplen, size_t wirelen)
{
	char addr[INET6_ADDRSTRLEN];
	struct src_stats *s;
	size_t l3_len, ip_total, udp_len;
	uint32_t want, got;
	const uint8_t *udp;
	bool ipv6;

	if (proto == 0x0800) {
		if (caplen < 20 || (p[0] >> 4) != 4 || (p[0] & 0x0f) != 5 ||
		    p[9] != 17)
			return;
		ipv6 = false;
		l3_len = 20;
		ip_total = get_be16(p + 2);
		inet_ntop(AF_INET, p + 12, addr, sizeof(addr));
	} else if (proto == 0x86dd) {
		if (caplen < 40 || (p[0] >> 4) != 6 || p[6] != 17)
			return;
		ipv6 = true;
		l3_len = 40;
		ip_total = 40 + (size_t)get_be16(p + 4);
		inet_ntop(AF_INET6, p + 8, addr, sizeof(addr));
	} else {
		return;
	}
	if (caplen < l3_len + UDP_LEN)
		return;
	udp = p + l3_len;
	if (get_be16(udp + 2) != ROCE_PORT)
		return;

	s = src_of(addr);
	s->frames++;
	udp_len = get_be16(udp + 4);
	if (caplen < wirelen || caplen < ip_total || udp_len < UDP_LEN ||
	    l3_len + udp_len > ip_total ||
	    udp_len < UDP_LEN + BTH_LEN + 4) {
		s->truncated++;
		if (shown++ < MAX_SHOWN)
			printf("icrc: frame %lu from %s: truncated or malformed (captured %zu of %zu, IP length %zu, UDP length %zu)\n",
			       no, addr, caplen, wirelen, ip_total, udp_len);
		return;
	}
	want = icrc(p, l3_len, ipv6, udp_len);
	got = get_le32(udp + udp_len - 4);
	if (want == got) {
		s->good++;
		if (verbose)
			printf("icrc: frame %lu from %s: opcode 0x%02x PSN %u ICRC %08x ok\n",
			       no, addr, udp[UDP_LEN],
			       get_be32(udp + UDP_LEN + 8) & 0xffffff, got);
		return;
	}
	s->bad++;
	if (shown++ < MAX_SHOWN)
		printf("icrc: frame %lu from %s: opcode 0x%02x QP 0x%06x PSN %u: ICRC on the wire %08x, computed %08x\n",
		       no, addr, udp[UDP_LEN],
		       get_be32(udp + UDP_LEN + 4) & 0xffffff,
		       get_be32(udp + UDP_LEN + 8) & 0xffffff, got, want);
}

/* A pcap header field in the file's byte order. */
static uint32_t pcap32(const uint8_t *p, bool swapped)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swapped ? __builtin_bswap32(v) : v;
}

int main(int argc, char **argv)
{
	static uint8_t buf[262144 + 64];
	unsigned long no = 0, total = 0, bad = 0;
	uint8_t gh[24], rh[16];
	uint32_t magic, linktype;
	const char *path;
	bool swapped;
	FILE *f;
	int i;

	if (argc == 3 && !strcmp(argv[1], "--verbose")) {
		verbose = true;
		path = argv[2];
	} else if (argc == 2 && argv[1][0] != '-') {
		path = argv[1];
	} else {
		fprintf(stderr, "usage: icrc_check [--verbose] FILE.pcap\n");
		return 2;
	}
	f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 2;
	}
	if (fread(gh, sizeof(gh), 1, f) != 1) {
		fprintf(stderr, "icrc_check: %s: no pcap header\n", path);
		return 2;
	}
	memcpy(&magic, gh, sizeof(magic));
	if (magic == 0xa1b2c3d4U || magic == 0xa1b23c4dU) {
		swapped = false;
	} else if (magic == 0xd4c3b2a1U || magic == 0x4d3cb2a1U) {
		swapped = true;
	} else {
		fprintf(stderr, "icrc_check: %s: not a pcap file (pcapng is not read)\n",
			path);
		return 2;
	}
	linktype = pcap32(gh + 20, swapped) & 0xffff;
	if (linktype != 1 && linktype != 113 && linktype != 276) {
		fprintf(stderr, "icrc_check: %s: link type %u not handled\n",
			path, linktype);
		return 2;
	}
	crc_init();

	while (fread(rh, sizeof(rh), 1, f) == 1) {
		uint32_t caplen = pcap32(rh + 8, swapped);
		uint32_t wirelen = pcap32(rh + 12, swapped);
		size_t l2;
		uint16_t proto;

		no++;
		if (caplen > sizeof(buf) || fread(buf, caplen, 1, f) != 1) {
			fprintf(stderr, "icrc_check: %s: record %lu is cut short\n",
				path, no);
			return 2;
		}
		if (linktype == 1) {
			if (caplen < 14)
				continue;
			proto = get_be16(buf + 12);
			l2 = 14;
			if (proto == 0x8100 && caplen >= 18) {
				proto = get_be16(buf + 16);
				l2 = 18;
			}
		} else if (linktype == 113) {
			if (caplen < 16)
				continue;
			proto = get_be16(buf + 14);
			l2 = 16;
		} else {
			if (caplen < 20)
				continue;
			proto = get_be16(buf);
			l2 = 20;
		}
		check_frame(no, proto, buf + l2, caplen - l2,
			    wirelen >= l2 ? wirelen - l2 : 0);
	}
	fclose(f);

	for (i = 0; i < nsrc; i++) {
		printf("icrc: from %s: %lu RoCEv2 frames, ICRC correct %lu, wrong %lu, truncated %lu\n",
		       srcs[i].addr, srcs[i].frames, srcs[i].good, srcs[i].bad,
		       srcs[i].truncated);
		total += srcs[i].frames;
		bad += srcs[i].bad + srcs[i].truncated;
	}
	printf("icrc: %lu frames read, %lu RoCEv2, %lu wrong or truncated\n",
	       no, total, bad);
	return total && !bad ? 0 : 1;
}
