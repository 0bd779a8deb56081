// SPDX-License-Identifier: GPL-2.0-only
/*
 * The environment of the transport's fuzz build (xport_env.h): what
 * kinc/fuzz_kernel.h declares and needs state for, and the NIC model's
 * functions outside the compiled files, reduced to what the fuzzed paths
 * may call. A model function the targets' QPs must never reach (the UD
 * send side's address handles, admin-only helpers) aborts.
 */
#include "dev_ah.h"
#include "dev_cmd.h"
#include "dev_srq.h"
#include "dev_xport_int.h"

#include "xport_env.h"

unsigned long jiffies;
bool fuzz_fail_alloc;
void (*fuzz_tx_hook)(struct sk_buff *skb);
struct fuzz_counts fuzz_counts;

/* --- sk_buff -------------------------------------------------------------- */

struct sk_buff *alloc_skb(unsigned int size, int gfp)
{
	struct sk_buff *skb;

	(void)gfp;
	if (fuzz_fail_alloc)
		return NULL;
	skb = calloc(1, sizeof(*skb));
	FUZZ_ASSERT(skb);
	/* Exactly @size bytes: AddressSanitizer sees an overrun. */
	skb->head = malloc(size ? size : 1);
	FUZZ_ASSERT(skb->head);
	skb->data = skb->head;
	skb->end = size;
	skb->truesize = size;
	fuzz_counts.skbs++;
	return skb;
}

void kfree_skb(struct sk_buff *skb)
{
	int i;

	if (!skb)
		return;
	if (skb->users) {
		skb->users--;
		return;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++)
		put_page(skb_shinfo(skb)->frags[i].page);
	if (skb->head_frag)
		skb_free_frag(skb->head);
	else
		free(skb->head);
	free(skb);
	fuzz_counts.skbs--;
}

/*
 * As the kernel's: the head is a netdev_alloc_frag() fragment of
 * @frag_size bytes, its end the shared info (here kept in the sk_buff).
 */
struct sk_buff *build_skb(void *data, unsigned int frag_size)
{
	u32 info = SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;

	if (fuzz_fail_alloc)
		return NULL;
	FUZZ_ASSERT(frag_size > info);
	skb = calloc(1, sizeof(*skb));
	FUZZ_ASSERT(skb);
	skb->head = data;
	skb->data = data;
	skb->end = frag_size - info;
	skb->truesize = frag_size;
	skb->head_frag = 1;
	fuzz_counts.skbs++;
	return skb;
}

void skb_free_frag(void *data)
{
	put_page(virt_to_head_page(data));
}

struct sk_buff *fuzz_skb_from(const void *data, u32 len)
{
	struct sk_buff *skb = alloc_skb(len, 0);

	FUZZ_ASSERT(skb);
	memcpy(skb_put(skb, len), data, len);
	return skb;
}

/* As the kernel's: linear part first, then the fragments, in order. */
int skb_copy_bits(const struct sk_buff *skb, int offset, void *to, int len)
{
	u32 off = offset, left = len, head = skb_headlen(skb), n;
	u8 *dst = to;
	int i;

	if (offset < 0 || len < 0 || off > skb->len || left > skb->len - off)
		return -EFAULT;
	if (off < head) {
		n = min(left, head - off);
		memcpy(dst, skb->data + off, n);
		dst += n;
		left -= n;
		off = head;
	}
	off -= head;
	for (i = 0; left && i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];

		if (off >= f->size) {
			off -= f->size;
			continue;
		}
		n = min(left, f->size - off);
		memcpy(dst, f->page->addr + f->off + off, n);
		dst += n;
		left -= n;
		off = 0;
	}
	FUZZ_ASSERT(!left);	/* len and data_len disagree with the frags */
	return 0;
}

unsigned int skb_seq_read(unsigned int consumed, const u8 **data,
			  struct skb_seq_state *st)
{
	const struct sk_buff *skb = st->skb;
	u32 pos = st->lower + consumed, head = skb_headlen(skb), off;
	int i;

	if (pos >= st->upper || pos >= skb->len)
		return 0;
	if (pos < head) {
		*data = skb->data + pos;
		return min(head, st->upper) - pos;
	}
	off = pos - head;
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];

		if (off < f->size) {
			*data = f->page->addr + f->off + off;
			return min(f->size - off, st->upper - pos);
		}
		off -= f->size;
	}
	return 0;
}

int dev_queue_xmit(struct sk_buff *skb)
{
	fuzz_counts.tx++;
	if (fuzz_tx_hook)
		fuzz_tx_hook(skb);
	kfree_skb(skb);
	return NET_XMIT_SUCCESS;
}

/* --- pages of netdev_alloc_frag() ------------------------------------------ */

#define FRAG_PAGES_MAX	256

static struct page *frag_pages[FRAG_PAGES_MAX];

void *netdev_alloc_frag(unsigned int len)
{
	struct page *p;
	int i;

	if (fuzz_fail_alloc)
		return NULL;
	FUZZ_ASSERT(len <= PAGE_SIZE);
	for (i = 0; i < FRAG_PAGES_MAX && frag_pages[i]; i++)
		;
	FUZZ_ASSERT(i < FRAG_PAGES_MAX);
	p = calloc(1, sizeof(*p));
	FUZZ_ASSERT(p);
	/* A whole page, but the caller may use @len bytes of it only. */
	p->addr = malloc(len ? len : 1);
	FUZZ_ASSERT(p->addr);
	p->refs = 1;
	frag_pages[i] = p;
	fuzz_counts.frag_pages++;
	return p->addr;
}

struct page *virt_to_head_page(const void *addr)
{
	int i;

	for (i = 0; i < FRAG_PAGES_MAX; i++)
		if (frag_pages[i] && frag_pages[i]->addr == addr)
			return frag_pages[i];
	abort();	/* only netdev_alloc_frag() memory is looked up */
}

void put_page(struct page *p)
{
	int i;

	FUZZ_ASSERT(p->refs > 0);
	if (--p->refs)
		return;
	for (i = 0; i < FRAG_PAGES_MAX; i++)
		if (frag_pages[i] == p) {
			frag_pages[i] = NULL;
			free(p->addr);
			free(p);
			fuzz_counts.frag_pages--;
			return;
		}
	/* A pinned MR page lost its last reference: a refcount bug. */
	FUZZ_ASSERT(p->unpinned);
	free(p->addr);
	p->addr = NULL;
}

void fuzz_env_reset(void)
{
	int i;

	for (i = 0; i < FRAG_PAGES_MAX; i++)
		if (frag_pages[i]) {
			free(frag_pages[i]->addr);
			free(frag_pages[i]);
			frag_pages[i] = NULL;
		}
	memset(&fuzz_counts, 0, sizeof(fuzz_counts));
	fuzz_fail_alloc = false;
}

/* --- the rest of the NIC model, as the transport sees it -------------------- */

void dray_hw_engine_kick(struct dray_hw *hw)
{
	(void)hw;
	fuzz_counts.kicks++;
}

void dray_hw_engine_lock(struct dray_hw *hw)
{
	spin_lock_bh(&hw->engine.lock);
}

void dray_hw_engine_unlock(struct dray_hw *hw)
{
	spin_unlock_bh(&hw->engine.lock);
}

/* Internal loopback: the harness's paths never name the port's own MAC. */
void dray_hw_engine_rx(struct dray_hw *hw, struct sk_buff *skb)
{
	(void)hw;
	(void)skb;
	abort();
}

void dray_hw_eq_post(struct dray_hw *hw, u32 eqn, u8 type, u32 data0,
		     u64 data1)
{
	(void)hw;
	(void)data0;
	(void)data1;
	FUZZ_ASSERT(eqn < DRAY_HW_MAX_EQ && type);
	fuzz_counts.events++;
}

/* Admin paths only (MR and window commands). */
struct dray_hw_pd *dray_hw_pd_get(struct dray_hw *hw, u32 pdn)
{
	(void)hw;
	(void)pdn;
	return FUZZ_UNREACHED_PTR();
}

void dray_hw_pd_put(struct dray_hw *hw, u32 pdn)
{
	(void)hw;
	(void)pdn;
	FUZZ_UNREACHED();
}

/*
 * XRC domains: the SRQ and QP commands take and drop references; the
 * targets make their SRQs and QPs as those commands leave them.
 */
bool dray_hw_xrcd_get(struct dray_hw *hw, u32 xrcdn)
{
	(void)hw;
	(void)xrcdn;
	return FUZZ_UNREACHED();
}

void dray_hw_xrcd_put(struct dray_hw *hw, u32 xrcdn)
{
	(void)hw;
	(void)xrcdn;
	FUZZ_UNREACHED();
}

/*
 * The send side of dev_ud.c: address handles (dev_ah.c) and the port's
 * MTU (dev_port.c). The targets give the UD QP no send WQEs, so nothing
 * looks an address up or asks for the MTU.
 */
struct dray_hw_ah *dray_hw_ah_find(struct dray_hw *hw, u32 ahn)
{
	(void)hw;
	(void)ahn;
	return FUZZ_UNREACHED_PTR();
}

bool dray_hw_av_resolve(struct dray_hw *hw, const struct dray_path *av,
			struct dray_hw_path *out)
{
	(void)hw;
	(void)av;
	(void)out;
	return FUZZ_UNREACHED();
}

u8 dray_hw_port_active_mtu(struct dray_hw *hw)
{
	(void)hw;
	return FUZZ_UNREACHED();
}

/*
 * Multicast (dev_mcast.c): the fuzzed device has no group, so a frame to
 * a group reaches no QP, and a UD send to one is not looped back.
 */
bool dray_hw_mgid_valid(const u8 *gid)
{
	static const u8 v4[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(gid, v4, sizeof(v4)))
		return (gid[12] & 0xf0) == 0xe0;
	return gid[0] == 0xff;
}

u32 dray_hw_mcast_qpns(struct dray_hw *hw, const u8 *gid, u32 *qpns)
{
	(void)hw;
	(void)gid;
	(void)qpns;
	fuzz_counts.mcast_rx++;
	return 0;
}

bool dray_hw_mcast_is_ours(struct dray_hw *hw, const struct in6_addr *dst)
{
	(void)hw;
	(void)dst;
	return false;
}
