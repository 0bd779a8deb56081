/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: memory translation and protection (dev_mem.c) and the
 * data movement between host memory and frames that goes through it
 * (dev_sge.c). The device reaches host memory only through what it was
 * given: MTT-described buffers (queue rings) and MRs, every access of the
 * data path checked against an MR's key, PD, rights and range first.
 */
#ifndef DRAY_DEV_MEM_H
#define DRAY_DEV_MEM_H

#include <linux/types.h>

#include "dev_obj.h"

struct dray_hw;
struct sk_buff;

/*
 * dray_hw_buf_map() walks @n_pages MTT entries from @mtt_addr and vmap()s
 * the pages. Returns DRAY_AQ_STS_OK, or a DRAY_AQ_STS_* status with
 * *syndrome set (DMA_ERROR/MTT for an unusable MTT page or entry).
 * Context: process; engine.lock not required.
 */
int dray_hw_buf_map(struct dray_hw *hw, u64 mtt_addr, u32 n_pages,
		    struct dray_hw_buf *buf, u32 *syndrome);
void dray_hw_buf_unmap(struct dray_hw_buf *buf);

/* Why a memory access was refused; dray_hw_mr_check() result. */
enum dray_mr_err {
	DRAY_MR_OK = 0,
	DRAY_MR_ERR_KEY,	/* no such key */
	DRAY_MR_ERR_PD,		/* MR on another PD */
	DRAY_MR_ERR_ACCESS,	/* right not granted */
	DRAY_MR_ERR_RANGE,	/* outside [iova, iova + length) */
	DRAY_MR_ERR_STATE,	/* a FAST_REG MR or window not VALID */
	DRAY_MR_ERR_QP,		/* a type 2 window of another QP */
};

/*
 * The rest runs in an engine pass, engine.lock held (the MR is valid only
 * until it is released).
 *
 * dray_hw_mr_check(): @access is the DRAY_ACCESS_* rights the access
 * needs (0: local read). A zero @len passes the range check at any @addr.
 * On DRAY_MR_OK, *mr is the MR.
 */
enum dray_mr_err dray_hw_mr_check(struct dray_hw *hw, u32 key, u32 pdn,
				  u8 access, u64 addr, u64 len,
				  struct dray_hw_mr **mr);
/* Copy into or out of a checked MR range. */
void dray_hw_mr_write(struct dray_hw_mr *mr, u64 addr, const void *src,
		      size_t len);
void dray_hw_mr_read(struct dray_hw_mr *mr, u64 addr, void *dst, size_t len);
/*
 * May the transport take page references on the MR's pages (zero copy)?
 * Not for a DRAY_MR_F_PHYSICAL or DRAY_MR_F_FAST_REG MR: its pages are
 * any RAM a kernel consumer names, e.g. the tail pages of a non-compound
 * allocation, whose refcount is zero.
 */
static inline bool dray_hw_mr_zcopy_ok(const struct dray_hw_mr *mr)
{
	return !(mr->flags & (DRAY_MR_F_PHYSICAL | DRAY_MR_F_FAST_REG));
}

/* The page and in-page offset/length of the piece at addr (zero copy). */
struct page *dray_hw_mr_page(struct dray_hw_mr *mr, u64 addr, u32 *offset,
			     u32 *len);
/*
 * 8-byte atomic at addr (8-byte aligned, checked): compare-and-swap when
 * cmp_swap, else fetch-and-add. Returns the original value. A misaligned
 * addr is refused (returns 0, memory untouched): check it before.
 */
u64 dray_hw_mr_atomic(struct dray_hw_mr *mr, u64 addr, bool cmp_swap,
		      u64 compare_add, u64 swap);
/*
 * ATOMIC_WRITE: store the 8 bytes at @value, in order, at addr (8-byte
 * aligned, checked; else nothing is written) as one access, which the
 * atomics above never see in part.
 */
void dray_hw_mr_atomic_write(struct dray_hw_mr *mr, u64 addr,
			     const u8 value[8]);

/*
 * Fast registration (the local operations of dray_queue.h), for the QP's
 * PD @pdn. dray_hw_mr_fast_reg() executes a REG_MR WQE @w;
 * dray_hw_mr_invalidate() invalidates the fast-registration MR @key.
 * Each returns 0 or, refused, a DRAY_VERR_* code; the MR is unchanged
 * then.
 */
u8 dray_hw_mr_fast_reg(struct dray_hw *hw, u32 pdn,
		       const struct dray_sq_wqe *w);
u8 dray_hw_mr_invalidate(struct dray_hw *hw, u32 pdn, u32 key);

/*
 * dev_mw.c: memory windows, for the engine. dray_hw_mw_bind() executes a
 * BIND_MW WQE @w of @qp: 0 or a DRAY_VERR_* code. dray_hw_key_invalidate()
 * executes a LOCAL_INV of @key on @qp, or (@remote) the invalidation a
 * received SEND with invalidate asks for, of a window or of a
 * fast-registration MR (through dray_hw_mr_invalidate()), of PD @pdn.
 * dray_hw_rkey_check() is dray_hw_mr_check() for a key from the wire,
 * an MR's or a window's, received on @qp, whose accesses are checked
 * against PD @pdn (the QP's; an XRC target's, the named XRC SRQ's): on
 * DRAY_MR_OK, *addr is the address in *mr where the access goes (a
 * window translates it).
 */
u8 dray_hw_mw_bind(struct dray_hw *hw, const struct dray_hw_qp *qp,
		   const struct dray_sq_wqe *w);
u8 dray_hw_key_invalidate(struct dray_hw *hw, u32 pdn,
			  const struct dray_hw_qp *qp, u32 key, bool remote);
enum dray_mr_err dray_hw_rkey_check(struct dray_hw *hw, u32 key, u32 pdn,
				    const struct dray_hw_qp *qp, u8 access,
				    u64 *addr, u64 len,
				    struct dray_hw_mr **mr);

/* dev_sge.c: data between frames and memory (the kernel-doc there). */
int dray_hw_mr_copy_in(struct dray_hw_mr *mr, u64 addr,
		       const struct sk_buff *skb, u32 off, const void *buf,
		       u32 len);
int dray_hw_mr_to_skb(struct sk_buff *skb, struct dray_hw_mr *mr, u64 addr,
		      u32 len, bool zcopy);
u8 dray_hw_sge_scatter(struct dray_hw *hw, u32 pdn,
		       const struct dray_sge *sge, u32 num_sge, u64 msg_off,
		       const struct sk_buff *skb, u32 skb_off, const void *buf,
		       u32 len);
u32 dray_hw_sge_frags(const struct dray_sge *sge, u32 num_sge, u64 msg_off,
		      u32 len);
u8 dray_hw_sge_gather(struct dray_hw *hw, u32 pdn, struct sk_buff *skb,
		      const struct dray_hw_swqe *wqe, u64 msg_off, u32 len,
		      bool zcopy);

#endif /* DRAY_DEV_MEM_H */
