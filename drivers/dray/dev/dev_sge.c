// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: data movement between host memory and frames, the
 * NIC's DMA engine. Every piece goes through an MR that
 * dray_hw_mr_check() admitted (dev_mem.c): placing received data into a
 * receive WQE's SGEs or an RDMA target (the one copy of the receive
 * path), and gathering a send WQE's payload into a frame, as page
 * fragments that reference the registered pages (zero copy) or copied.
 *
 * Context: an engine pass, engine.lock held (the MRs stay valid only
 * while it is).
 */

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/skbuff.h>

#include "dev.h"
#include "dev_mem.h"
#include "dev_obj.h"

/*
 * Zero copy is not allowed from @page (a physical or fast-registration
 * MR's, or a page that cannot be held): copy the piece into a fragment of
 * its own instead.
 */
static int skb_add_copy_frag(struct sk_buff *skb, struct page *page,
			     u32 off, u32 len)
{
	struct page *fpage;
	void *p, *va;
	int i = skb_shinfo(skb)->nr_frags;

	/* One fragment stays free for the trailer. */
	if (i >= MAX_SKB_FRAGS - 1)
		return -EMSGSIZE;
	p = netdev_alloc_frag(len);
	if (!p)
		return -ENOMEM;
	va = kmap_local_page(page);
	memcpy(p, va + off, len);
	kunmap_local(va);
	fpage = virt_to_head_page(p);
	skb_fill_page_desc(skb, i, fpage, p - page_address(fpage), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return 0;
}

/*
 * Hold @page for a fragment: the frame may outlive the MR (it can sit in
 * a queue of the netdev after DESTROY_MR completed). A compound page is
 * held through its head. A page without a reference count of its own, a
 * tail page of a non-compound allocation (what dma_alloc_coherent()
 * makes, and so what a dma-buf exporter may hand out), cannot be held:
 * a reference taken on it would free it when dropped.
 */
static bool frag_page_hold(struct page *page)
{
	if (PageCompound(page)) {
		get_page(page);
		return true;
	}
	return get_page_unless_zero(page);
}

/**
 * dray_hw_mr_to_skb() - add @len bytes of @mr at @addr to a frame
 * @skb: the frame
 * @mr: the MR, [@addr, @addr + @len) already checked
 * @addr: where
 * @len: bytes
 * @zcopy: attach the pages as fragments (else copy into the linear part,
 *	   which must have room)
 *
 * One fragment always stays free for the frame's trailer.
 *
 * Return: 0, -EFAULT for a missing page, -EMSGSIZE when the frame has no
 * fragment left, -ENOMEM.
 */
int dray_hw_mr_to_skb(struct sk_buff *skb, struct dray_hw_mr *mr, u64 addr,
		      u32 len, bool zcopy)
{
	while (len) {
		struct page *page;
		u32 off, plen;
		int i;

		page = dray_hw_mr_page(mr, addr, &off, &plen);
		if (!page || !plen)
			return -EFAULT;
		plen = min(plen, len);
		i = skb_shinfo(skb)->nr_frags;
		if (zcopy && dray_hw_mr_zcopy_ok(mr) && i &&
		    skb_can_coalesce(skb, i, page, off)) {
			/* the fragment before holds the page already */
			skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], plen);
			skb->len += plen;
			skb->data_len += plen;
			skb->truesize += plen;
		} else if (zcopy && dray_hw_mr_zcopy_ok(mr) &&
			   i < MAX_SKB_FRAGS - 1 && frag_page_hold(page)) {
			/* One fragment stays free for the trailer. */
			skb_fill_page_desc(skb, i, page, off, plen);
			skb->len += plen;
			skb->data_len += plen;
			skb->truesize += plen;
		} else if (zcopy) {
			int ret = skb_add_copy_frag(skb, page, off, plen);

			if (ret)
				return ret;
		} else {
			void *va = kmap_local_page(page);

			skb_put_data(skb, va + off, plen);
			kunmap_local(va);
		}
		addr += plen;
		len -= plen;
	}
	return 0;
}

/**
 * dray_hw_mr_copy_in() - write into a checked MR range (the one copy)
 * @mr: the MR, [@addr, @addr + @len) already checked
 * @addr: where
 * @skb: source frame, or NULL to copy from @buf
 * @off: offset of the data in @skb
 * @buf: source buffer when @skb is NULL
 * @len: bytes
 *
 * Return: 0, or -EFAULT if a page is missing or the frame is short.
 */
int dray_hw_mr_copy_in(struct dray_hw_mr *mr, u64 addr,
		       const struct sk_buff *skb, u32 off, const void *buf,
		       u32 len)
{
	while (len) {
		struct page *page;
		u32 poff, plen;
		void *va;
		int ret = 0;

		page = dray_hw_mr_page(mr, addr, &poff, &plen);
		if (!page || !plen)
			return -EFAULT;
		plen = min(plen, len);
		va = kmap_local_page(page);
		if (skb) {
			ret = skb_copy_bits(skb, off, va + poff, plen);
			off += plen;
		} else {
			memcpy(va + poff, buf, plen);
			buf += plen;
		}
		kunmap_local(va);
		flush_dcache_page(page);
		if (ret)
			return -EFAULT;
		addr += plen;
		len -= plen;
	}
	return 0;
}

/*
 * A walk over the pieces of an SGE list that [msg_off, msg_off + len) of
 * a message covers: sge_next() gives the address, lkey and length of the
 * next piece, false when the list or the range ends (w->left says how
 * much of the range the list did not cover).
 */
struct sge_walk {
	const struct dray_sge	*sge;
	u32			num_sge;
	u32			i;
	u64			skip;	/* message bytes before the range */
	u32			left;	/* range bytes not yet given */
};

static void sge_walk_init(struct sge_walk *w, const struct dray_sge *sge,
			  u32 num_sge, u64 msg_off, u32 len)
{
	w->sge = sge;
	w->num_sge = num_sge;
	w->i = 0;
	w->skip = msg_off;
	w->left = len;
}

static bool sge_next(struct sge_walk *w, u64 *addr, u32 *lkey, u32 *len)
{
	while (w->i < w->num_sge && w->left) {
		const struct dray_sge *sge = &w->sge[w->i++];
		u32 slen = le32_to_cpu(sge->length);

		if (w->skip >= slen) {
			w->skip -= slen;
			continue;
		}
		*addr = le64_to_cpu(sge->addr) + w->skip;
		*lkey = le32_to_cpu(sge->lkey);
		*len = min_t(u64, slen - w->skip, w->left);
		w->skip = 0;
		w->left -= *len;
		return true;
	}
	return false;
}

/**
 * dray_hw_sge_scatter() - place data into a list of local SGEs
 * @hw: the device
 * @pdn: the PD of the QP the SGEs belong to
 * @sge: the SGEs (from a WQE; little endian)
 * @num_sge: how many
 * @msg_off: offset in the message at which @len bytes go
 * @skb: source frame, or NULL to copy from @buf
 * @skb_off: offset of the data in @skb
 * @buf: source buffer when @skb is NULL
 * @len: bytes
 *
 * Every SGE piece is checked (lkey, PD, LOCAL_WRITE, range).
 *
 * Return: DRAY_CQE_ST_SUCCESS, LOC_PROT_ERR, or LOC_LEN_ERR if the SGEs
 * end before the data.
 */
u8 dray_hw_sge_scatter(struct dray_hw *hw, u32 pdn,
		       const struct dray_sge *sge, u32 num_sge, u64 msg_off,
		       const struct sk_buff *skb, u32 skb_off, const void *buf,
		       u32 len)
{
	struct dray_hw_mr *mr;
	struct sge_walk w;
	u32 lkey, n;
	u64 addr;

	sge_walk_init(&w, sge, num_sge, msg_off, len);
	while (sge_next(&w, &addr, &lkey, &n)) {
		if (dray_hw_mr_check(hw, lkey, pdn, DRAY_ACCESS_LOCAL_WRITE,
				     addr, n, &mr) ||
		    dray_hw_mr_copy_in(mr, addr, skb, skb_off, buf, n))
			return DRAY_CQE_ST_LOC_PROT_ERR;
		skb_off += n;
		if (buf)
			buf += n;
	}
	return w.left ? DRAY_CQE_ST_LOC_LEN_ERR : DRAY_CQE_ST_SUCCESS;
}

/*
 * Page fragments @len bytes at @msg_off of an SGE list need at most (an
 * MR's pages follow its iova: a page boundary is a multiple of 4 KiB).
 */
u32 dray_hw_sge_frags(const struct dray_sge *sge, u32 num_sge, u64 msg_off,
		      u32 len)
{
	u32 lkey, n, frags = 0;
	struct sge_walk w;
	u64 addr;

	sge_walk_init(&w, sge, num_sge, msg_off, len);
	while (sge_next(&w, &addr, &lkey, &n))
		frags += (offset_in_page(addr) + n + PAGE_SIZE - 1) >>
			 PAGE_SHIFT;
	return frags;
}

/**
 * dray_hw_sge_gather() - add @len bytes at @msg_off of a send WQE's payload
 * @hw: the device
 * @pdn: the PD of the QP the WQE belongs to
 * @skb: the frame
 * @wqe: the send WQE (inline data or SGEs)
 * @msg_off: offset in the message
 * @len: bytes
 * @zcopy: attach the pages (the frame was started for zero copy)
 *
 * Return: DRAY_CQE_ST_SUCCESS, LOC_PROT_ERR (an SGE refused),
 * LOC_LEN_ERR (the WQE has less data), LOC_QP_OP_ERR (frame too
 * fragmented).
 */
u8 dray_hw_sge_gather(struct dray_hw *hw, u32 pdn, struct sk_buff *skb,
		      const struct dray_hw_swqe *wqe, u64 msg_off, u32 len,
		      bool zcopy)
{
	struct dray_hw_mr *mr;
	struct sge_walk w;
	u32 lkey, n;
	u64 addr;
	int ret;

	/* Inline payload, or the value of an ATOMIC_WRITE (dev_wq.c). */
	if (wqe->inline_data) {
		if (msg_off + len > wqe->length)
			return DRAY_CQE_ST_LOC_LEN_ERR;
		skb_put_data(skb, wqe->inline_data + msg_off, len);
		return DRAY_CQE_ST_SUCCESS;
	}
	sge_walk_init(&w, wqe->sge, wqe->num_sge, msg_off, len);
	while (sge_next(&w, &addr, &lkey, &n)) {
		if (dray_hw_mr_check(hw, lkey, pdn, 0, addr, n, &mr))
			return DRAY_CQE_ST_LOC_PROT_ERR;
		ret = dray_hw_mr_to_skb(skb, mr, addr, n, zcopy);
		if (ret == -EMSGSIZE)
			return DRAY_CQE_ST_LOC_QP_OP_ERR;
		if (ret)
			return DRAY_CQE_ST_LOC_PROT_ERR;
	}
	return w.left ? DRAY_CQE_ST_LOC_LEN_ERR : DRAY_CQE_ST_SUCCESS;
}
