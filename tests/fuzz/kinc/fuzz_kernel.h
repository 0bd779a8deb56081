/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel, as far as the NIC model's transport needs it, in user space:
 * the fuzz build of drivers/dray/dev/dev_{xport,resp,comp,req,net,mem,mw,
 * sge,wq,cq,wire,icrc}.c (tests/fuzz/Makefile) finds every <linux/...>,
 * <asm/...> and <net/...> header it includes in tests/fuzz/kinc/, and each
 * of those includes this file.
 *
 * The stand-ins are small and literal:
 *  - sk_buff: a linear buffer plus page fragments, with the fields and
 *    helpers the transport touches (skb_copy_bits() and the sequential
 *    reader walk fragments as the kernel's do);
 *  - struct page: one 4 KiB allocation of its own (so AddressSanitizer
 *    sees every page's bounds); kmap is its address;
 *  - locks: spinlocks and mutexes record whether they are held, and
 *    lockdep_assert_held() aborts when the lock is not (the engine's
 *    contract: every transport function runs under engine.lock);
 *  - xarray: a short table of (index, pointer) pairs;
 *  - jiffies: a variable the harness moves; timers and work are not run.
 * Functions only the admin paths reach (MTT walks, vmap, allocation of
 * table indexes) abort: the fuzzers never call admin commands.
 */
#ifndef DRAY_FUZZ_KERNEL_H
#define DRAY_FUZZ_KERNEL_H

#include <linux/types.h>	/* kinc/linux/types.h: __u8 ... and u8 ... */
/* What the unit tests shim already: byte order, BIT(), crc32_le() ... */
#include "../../unit/kshim.h"
#include <linux/build_bug.h>	/* static_assert() */

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- compiler, bits, arithmetic ------------------------------------------ */

#define __acquires(x)
#define __releases(x)
#define fallthrough		__attribute__((__fallthrough__))
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define READ_ONCE(x)		(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define barrier()		__asm__ __volatile__("" ::: "memory")
#define cond_resched()		do { } while (0)
#define might_sleep()		do { } while (0)

#define BIT_ULL(n)		(1ULL << (n))
#define GENMASK(h, l)		((~0UL >> (63 - (h))) & (~0UL << (l)))
#define GENMASK_ULL(h, l)	((~0ULL >> (63 - (h))) & (~0ULL << (l)))
#define FIELD_PREP(m, v)	(((typeof(m))(v) << __builtin_ctzll(m)) & (m))
#define FIELD_GET(m, v)		((typeof(m))(((v) & (m)) >> __builtin_ctzll(m)))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
#define U64_MAX			UINT64_MAX
#define U8_MAX			UINT8_MAX
#define U32_MAX			UINT32_MAX
#define sizeof_field(t, m)	sizeof(((t *)0)->m)
#define check_add_overflow(a, b, d) __builtin_add_overflow(a, b, d)
#define ilog2(n)		(63 - __builtin_clzll(n))

#define min(a, b)		((a) < (b) ? (a) : (b))
#define max(a, b)		((a) > (b) ? (a) : (b))
#define min_t(t, a, b)		((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)		((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define swap(a, b)		do { __typeof__(a) __t = (a); (a) = (b); (b) = __t; } while (0)
#define clamp_t(t, v, lo, hi)	min_t(t, max_t(t, v, lo), hi)

#define cpu_to_le16(x)		((__le16)htole16(x))
#define cpu_to_le64(x)		((__le64)htole64(x))
#define le16_to_cpu(x)		le16toh((uint16_t)(x))
#define le64_to_cpu(x)		le64toh((uint64_t)(x))
#define htons(x)		cpu_to_be16(x)
#define ntohs(x)		be16_to_cpu(x)

static inline void put_unaligned_le32(u32 v, void *p)
{
	__le32 le = cpu_to_le32(v);

	memcpy(p, &le, sizeof(le));
}

static inline void *memchr_inv(const void *p, int c, size_t n)
{
	const u8 *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (u8)c)
			return (void *)(b + i);
	return NULL;
}

/* --- printing: compiled (format checked), not printed -------------------- */

static inline __attribute__((format(printf, 1, 2)))
void fuzz_printk(const char *fmt, ...)
{
	(void)fmt;
}

#define pr_debug(fmt, ...)		fuzz_printk(fmt, ##__VA_ARGS__)
#define pr_debug_ratelimited(fmt, ...)	fuzz_printk(fmt, ##__VA_ARGS__)
#define pr_warn_ratelimited(fmt, ...)	fuzz_printk(fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)		fuzz_printk(fmt, ##__VA_ARGS__)
#define pr_err(fmt, ...)		fuzz_printk(fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)		fuzz_printk(fmt, ##__VA_ARGS__)
#define WARN_ON(c)			({ if (c) abort(); 0; })
#define WARN_ON_ONCE(c)			WARN_ON(c)

/* Reached only from code the fuzzers never run (admin commands). */
#define FUZZ_UNREACHED()						\
	({ fprintf(stderr, "fuzz shim: %s reached\n", __func__); abort(); 0; })
#define FUZZ_UNREACHED_PTR()	((void *)(uintptr_t)FUZZ_UNREACHED())

/* --- atomics, locks ------------------------------------------------------ */

typedef struct { int counter; } atomic_t;
typedef struct { s64 counter; } atomic64_t;
#define atomic64_inc(a)		((a)->counter++)
#define atomic64_read(a)	((a)->counter)
#define atomic_read(a)		((a)->counter)
#define atomic_set(a, v)	((a)->counter = (v))

static inline u64 fuzz_cmpxchg64(u64 *p, u64 old, u64 new)
{
	u64 cur = *p;

	if (cur == old)
		*p = new;
	return cur;
}

#define cmpxchg64(p, o, n)	fuzz_cmpxchg64(p, o, n)

/* A lock records whether it is held; lockdep_assert_held() checks. */
typedef struct { int held; } spinlock_t;
struct mutex { int held; };

#define spin_lock_bh(l)		((l)->held++)
#define spin_unlock_bh(l)	((l)->held--)
#define spin_lock(l)		((l)->held++)
#define spin_unlock(l)		((l)->held--)
#define mutex_lock(l)		((l)->held++)
#define mutex_unlock(l)		((l)->held--)
#define local_bh_disable()	do { } while (0)
#define local_bh_enable()	do { } while (0)

#define lockdep_assert_held(l)						\
	do {								\
		if (!(l)->held) {					\
			fprintf(stderr, "lockdep: %s not held in %s\n",	\
				#l, __func__);				\
			abort();					\
		}							\
	} while (0)

/* --- lists, work, timers, wait queues (types only) ------------------------ */

struct list_head { struct list_head *next, *prev; };
struct work_struct { int unused; };
struct workqueue_struct;
struct timer_list { int unused; };
typedef struct { int unused; } wait_queue_head_t;
struct notifier_block { int unused; };
struct netdev_net_notifier { int unused; };
typedef struct { int unused; } netdevice_tracker;
struct task_struct;
struct device;

/* --- time ------------------------------------------------------------------ */

#define HZ			250
extern unsigned long jiffies;	/* the harness moves it */
#define time_after(a, b)	((long)((b) - (a)) < 0)
#define time_before(a, b)	time_after(b, a)
#define time_after_eq(a, b)	((long)((a) - (b)) >= 0)

static inline unsigned long usecs_to_jiffies(u64 us)
{
	return (us * HZ + 999999) / 1000000;
}

static inline unsigned long msecs_to_jiffies(unsigned int ms)
{
	return ((u64)ms * HZ + 999) / 1000;
}

static inline unsigned long nsecs_to_jiffies(u64 ns)
{
	return ns / (1000000000 / HZ);
}

/* --- memory ---------------------------------------------------------------- */

#define PAGE_SHIFT		12
#define PAGE_SIZE		(1UL << PAGE_SHIFT)
#define offset_in_page(p)	((unsigned long)(p) & (PAGE_SIZE - 1))
#define GFP_KERNEL		0
#define GFP_ATOMIC		0
#define __GFP_NOWARN		0
#define VM_MAP			0
#define PAGE_KERNEL		0

/*
 * A page: the harness allocates each page's 4 KiB on its own. An MR's
 * pages hold one reference while it is registered (the pin); frames hold
 * more (zero copy). Pages of netdev_alloc_frag() are counted the same
 * way, so that a leak or a reference dropped twice shows.
 */
struct page {
	u8	*addr;
	int	refs;
	bool	compound;
	bool	unpinned;	/* an MR page whose MR is gone: free at 0 */
};

static inline void *kmap_local_page(struct page *p)
{
	return p->addr;
}

#define kunmap_local(va)	do { (void)(va); } while (0)
#define flush_dcache_page(p)	do { (void)(p); } while (0)
#define page_address(p)		((void *)(p)->addr)
#define PageCompound(p)		((p)->compound)

static inline void get_page(struct page *p)
{
	p->refs++;
}

static inline bool get_page_unless_zero(struct page *p)
{
	if (!p->refs)
		return false;
	p->refs++;
	return true;
}

void put_page(struct page *p);
/* The page a netdev_alloc_frag() buffer lives in. */
struct page *virt_to_head_page(const void *p);
void *netdev_alloc_frag(unsigned int len);

static inline void memcpy_to_page(struct page *p, size_t off, const void *s,
				  size_t len)
{
	memcpy(p->addr + off, s, len);
}

static inline void memcpy_from_page(void *d, struct page *p, size_t off,
				    size_t len)
{
	memcpy(d, p->addr + off, len);
}

/* Bus addresses: the model behind no IOMMU. None is RAM here. */
#define PHYS_PFN(a)		((unsigned long)((a) >> PAGE_SHIFT))
#define pfn_valid(pfn)		((void)(pfn), false)
#define pfn_to_page(pfn)	((struct page *)FUZZ_UNREACHED_PTR())
#define phys_to_virt(a)		FUZZ_UNREACHED_PTR()

static inline void *kzalloc(size_t n, int gfp)
{
	(void)gfp;
	return calloc(1, n);
}

static inline void *kvcalloc(size_t n, size_t s, int gfp)
{
	(void)gfp;
	return calloc(n, s);
}

#define kfree(p)		free(p)
#define kvfree(p)		free(p)
#define vmap(p, n, f, prot)	FUZZ_UNREACHED_PTR()
#define vunmap(p)		((void)FUZZ_UNREACHED())

/* --- xarray: a short table ------------------------------------------------- */

#define FUZZ_XA_SLOTS		16

struct xarray {
	unsigned long	index[FUZZ_XA_SLOTS];
	void		*entry[FUZZ_XA_SLOTS];
};

static inline void *xa_load(struct xarray *xa, unsigned long index)
{
	int i;

	for (i = 0; i < FUZZ_XA_SLOTS; i++)
		if (xa->entry[i] && xa->index[i] == index)
			return xa->entry[i];
	return NULL;
}

static inline void *xa_store(struct xarray *xa, unsigned long index,
			     void *entry, int gfp)
{
	int i;

	(void)gfp;
	for (i = 0; i < FUZZ_XA_SLOTS; i++)
		if (!xa->entry[i] || xa->index[i] == index) {
			xa->index[i] = index;
			xa->entry[i] = entry;
			return NULL;
		}
	abort();
}

static inline void *xa_erase(struct xarray *xa, unsigned long index)
{
	int i;

	for (i = 0; i < FUZZ_XA_SLOTS; i++)
		if (xa->entry[i] && xa->index[i] == index) {
			void *e = xa->entry[i];

			xa->entry[i] = NULL;
			return e;
		}
	return NULL;
}

struct xa_limit { u32 min, max; };
#define XA_LIMIT(lo, hi)	((struct xa_limit){ lo, hi })
#define xa_alloc_cyclic(xa, id, e, lim, next, gfp) FUZZ_UNREACHED()
#define xa_for_each(xa, i, e)						\
	for ((i) = 0; (i) < FUZZ_XA_SLOTS && ((e) = (xa)->entry[i], 1); (i)++) \
		if (e)

/* --- network --------------------------------------------------------------- */

#define ETH_ALEN		6
#define ETH_P_IP		0x0800
#define ETH_P_IPV6		0x86DD
#define PACKET_HOST		0
#define PACKET_LOOPBACK		5
#define IPPROTO_UDP		17
#define CHECKSUM_PARTIAL	3
#define NET_XMIT_SUCCESS	0
#define net_xmit_eval(e)	((e) != NET_XMIT_SUCCESS)
#define LL_RESERVED_SPACE(dev)	16

struct net_device {
	char	name[16];
};

static inline const char *netdev_name(const struct net_device *dev)
{
	return dev->name;
}

static inline void ether_addr_copy(u8 *dst, const u8 *src)
{
	memcpy(dst, src, 6);
}

static inline bool is_multicast_ether_addr(const u8 *a)
{
	return a[0] & 0x01;
}

static inline bool ether_addr_equal(const u8 *a, const u8 *b)
{
	return !memcmp(a, b, 6);
}

#define MAX_SKB_FRAGS		17
#define SKBFL_SHARED_FRAG	BIT(1)

typedef struct {
	struct page	*page;
	u32		off;
	u32		size;
} skb_frag_t;

struct skb_shared_info {
	u8		nr_frags;
	u8		flags;
	skb_frag_t	frags[MAX_SKB_FRAGS];
};

struct sk_buff {
	u8			*head;
	u8			*data;
	u32			len;		/* linear + fragments */
	u32			data_len;	/* fragments */
	u32			end;		/* bytes at head */
	u32			truesize;
	__be16			protocol;
	u8			pkt_type;
	u8			ip_summed;
	u16			csum_start;
	u16			csum_offset;
	u16			mac_header, network_header, transport_header;
	struct net_device	*dev;
	char			cb[48];
	struct skb_shared_info	shinfo;
	int			users;		/* references but one */
	u8			head_frag;	/* head from netdev_alloc_frag() */
};

struct sk_buff_head { int unused; };

#define skb_shinfo(skb)		(&(skb)->shinfo)
#define SKB_DATA_ALIGN(x)	(((x) + 63UL) & ~63UL)
#define skb_headlen(skb)	((skb)->len - (skb)->data_len)
#define skb_frag_size_add(f, n)	((f)->size += (n))

struct sk_buff *alloc_skb(unsigned int size, int gfp);
struct sk_buff *build_skb(void *data, unsigned int frag_size);
void skb_free_frag(void *data);
void kfree_skb(struct sk_buff *skb);
#define consume_skb(skb)	kfree_skb(skb)

/* Multicast loopback copies frames; the fuzzed device never has a group. */
static inline struct sk_buff *skb_copy(const struct sk_buff *skb, int gfp)
{
	(void)skb;
	(void)gfp;
	return NULL;
}

static inline struct sk_buff *skb_get(struct sk_buff *skb)
{
	skb->users++;
	return skb;
}

static inline void skb_reserve(struct sk_buff *skb, int len)
{
	skb->data += len;
}

static inline u32 skb_tailroom(const struct sk_buff *skb)
{
	return skb->end - (u32)(skb->data - skb->head) - skb_headlen(skb);
}

static inline void *skb_put(struct sk_buff *skb, unsigned int len)
{
	u8 *tail = skb->data + skb_headlen(skb);

	/* The kernel: skb_over_panic(); also: no linear data after frags. */
	if (len > skb_tailroom(skb) || skb->data_len)
		abort();
	skb->len += len;
	return tail;
}

static inline void *skb_put_data(struct sk_buff *skb, const void *d,
				 unsigned int len)
{
	void *p = skb_put(skb, len);

	memcpy(p, d, len);
	return p;
}

static inline void *skb_push(struct sk_buff *skb, unsigned int len)
{
	if (len > (u32)(skb->data - skb->head))
		abort();		/* skb_under_panic() */
	skb->data -= len;
	skb->len += len;
	return skb->data;
}

static inline void *skb_pull(struct sk_buff *skb, unsigned int len)
{
	if (len > skb_headlen(skb))
		abort();
	skb->data += len;
	skb->len -= len;
	return skb->data;
}

#define skb_reset_mac_header(skb) \
	((skb)->mac_header = (u16)((skb)->data - (skb)->head))
#define skb_set_network_header(skb, o) \
	((skb)->network_header = (u16)((skb)->data - (skb)->head + (o)))
#define skb_set_transport_header(skb, o) \
	((skb)->transport_header = (u16)((skb)->data - (skb)->head + (o)))
#define skb_transport_header(skb) ((skb)->head + (skb)->transport_header)
#define skb_network_header(skb)	((skb)->head + (skb)->network_header)

static inline void skb_fill_page_desc(struct sk_buff *skb, int i,
				      struct page *page, int off, int size)
{
	skb_frag_t *f = &skb_shinfo(skb)->frags[i];

	if (i >= MAX_SKB_FRAGS)
		abort();
	f->page = page;
	f->off = off;
	f->size = size;
	skb_shinfo(skb)->nr_frags = i + 1;
}

static inline bool skb_can_coalesce(struct sk_buff *skb, int i,
				    const struct page *page, int off)
{
	const skb_frag_t *f;

	if (!i)
		return false;
	f = &skb_shinfo(skb)->frags[i - 1];
	return f->page == page && f->off + f->size == (u32)off;
}

int skb_copy_bits(const struct sk_buff *skb, int offset, void *to, int len);

struct skb_seq_state {
	const struct sk_buff	*skb;
	u32			lower, upper;
};

static inline void skb_prepare_seq_read(struct sk_buff *skb, u32 from,
					u32 to, struct skb_seq_state *st)
{
	st->skb = skb;
	st->lower = from;
	st->upper = to;
}

unsigned int skb_seq_read(unsigned int consumed, const u8 **data,
			  struct skb_seq_state *st);
#define skb_abort_seq_read(st)	do { (void)(st); } while (0)

int dev_queue_xmit(struct sk_buff *skb);

/* IPv6/UDP headers as dev_net.c uses them. */
struct in6_addr_fuzz { u8 s6_addr[16]; };
struct ipv6hdr {
	u8			vtc[4];
	__be16			payload_len;
	u8			nexthdr;
	u8			hop_limit;
	struct in6_addr_fuzz	saddr;
	struct in6_addr_fuzz	daddr;
};

struct udphdr {
	__be16	source;
	__be16	dest;
	__be16	len;
	__sum16	check;
};

#define ipv6_hdr(skb)	((struct ipv6hdr *)skb_network_header(skb))
#define udp_hdr(skb)	((struct udphdr *)skb_transport_header(skb))

static inline __sum16 csum_ipv6_magic(const struct in6_addr_fuzz *s,
				      const struct in6_addr_fuzz *d, u32 len,
				      u8 proto, u32 sum)
{
	u64 acc = sum;
	int i;

	for (i = 0; i < 16; i += 2)
		acc += (u32)(s->s6_addr[i] << 8 | s->s6_addr[i + 1]) +
		       (u32)(d->s6_addr[i] << 8 | d->s6_addr[i + 1]);
	acc += len + proto;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (__sum16)htons((u16)~acc);
}

#endif /* DRAY_FUZZ_KERNEL_H */
