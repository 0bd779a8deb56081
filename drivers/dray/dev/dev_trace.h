/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: tracepoints (TRACE_SYSTEM dray), for the person
 * troubleshooting a connection: QP state changes, NAKs each way,
 * retransmissions, RNR waits and error completions. Each names the port
 * (the netdev) and the QP. Enable them under
 * /sys/kernel/tracing/events/dray/; Documentation/counters.md lists them.
 *
 * Every event is raised from an engine pass (engine.lock held) or from
 * an admin command under engine.lock: nothing here sleeps.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dray

/* Read once: <trace/define_trace.h> reads the events several times. */
#ifndef DRAY_DEV_TRACE_DEFS_H
#define DRAY_DEV_TRACE_DEFS_H

#include <linux/types.h>

/*
 * The kind of a NAK from its AETH syndrome (bits 6:5 the type, 4:0 the
 * NAK code or the RNR timer): 0x20 RNR, 0x60 | code a NAK.
 */
static inline u8 dray_trace_nak_kind(u8 syn)
{
	return (syn & 0x60) == 0x60 ? syn & 0x7f : syn & 0x60;
}

/* Why the requester goes back (dray_retransmit.reason). */
#define DRAY_TRACE_RETX_TIMEOUT		0	/* local ACK timeout */
#define DRAY_TRACE_RETX_SEQ		1	/* sequence NAK, or implied */
#define DRAY_TRACE_RETX_PROBE		2	/* tail probe (dev_req.c) */

#endif /* DRAY_DEV_TRACE_DEFS_H */

#if !defined(DRAY_DEV_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define DRAY_DEV_TRACE_H

#include <linux/netdevice.h>
#include <linux/tracepoint.h>

#define dray_trace_qp_state_name(s)					\
	__print_symbolic(s, { 0, "RESET" }, { 1, "INIT" }, { 2, "RTR" },	\
			 { 3, "RTS" }, { 4, "SQD" }, { 5, "SQE" }, { 6, "ERR" })

TRACE_EVENT(dray_qp_state,
	    TP_PROTO(const struct net_device *ndev, u32 qpn, u8 from, u8 to),
	    TP_ARGS(ndev, qpn, from, to),
	    TP_STRUCT__entry(__array(char, port, IFNAMSIZ)
			     __field(u32, qpn)
			     __field(u8, from)
			     __field(u8, to)),
	    TP_fast_assign(strscpy(__entry->port, netdev_name(ndev), IFNAMSIZ);
			   __entry->qpn = qpn;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("port=%s qpn=%u %s -> %s", __entry->port, __entry->qpn,
		      dray_trace_qp_state_name(__entry->from),
		      dray_trace_qp_state_name(__entry->to))
);

DECLARE_EVENT_CLASS(dray_nak_class,
		    TP_PROTO(const struct net_device *ndev, u32 qpn, u32 psn,
			     u8 syndrome),
		    TP_ARGS(ndev, qpn, psn, syndrome),
		    TP_STRUCT__entry(__array(char, port, IFNAMSIZ)
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u8, syndrome)
				     __field(u8, kind)),
		    TP_fast_assign(strscpy(__entry->port, netdev_name(ndev),
					   IFNAMSIZ);
				   __entry->qpn = qpn;
				   __entry->psn = psn;
				   __entry->syndrome = syndrome;
				   __entry->kind = dray_trace_nak_kind(syndrome);),
		    TP_printk("port=%s qpn=%u psn=%#x syndrome=%#x %s",
			      __entry->port, __entry->qpn, __entry->psn,
			      __entry->syndrome,
			      __print_symbolic(__entry->kind, { 0x20, "RNR" },
					       { 0x60, "PSN_SEQ" },
					       { 0x61, "INV_REQ" },
					       { 0x62, "REM_ACCESS" },
					       { 0x63, "REM_OP" },
					       { 0x64, "INV_RD_REQ" }))
);

/* A NAK the responder of QP qpn sent (psn: the PSN it names). */
DEFINE_EVENT(dray_nak_class, dray_nak_tx,
	     TP_PROTO(const struct net_device *ndev, u32 qpn, u32 psn,
		      u8 syndrome),
	     TP_ARGS(ndev, qpn, psn, syndrome));

/* A NAK the requester of QP qpn received. */
DEFINE_EVENT(dray_nak_class, dray_nak_rx,
	     TP_PROTO(const struct net_device *ndev, u32 qpn, u32 psn,
		      u8 syndrome),
	     TP_ARGS(ndev, qpn, psn, syndrome));

/*
 * The requester of QP qpn about to send again from psn: value is the
 * reason (dray_retransmit) or the wait in microseconds (dray_rnr_wait).
 */
DECLARE_EVENT_CLASS(dray_req_class,
		    TP_PROTO(const struct net_device *ndev, u32 qpn, u32 psn,
			     u32 value, u8 retries_left),
		    TP_ARGS(ndev, qpn, psn, value, retries_left),
		    TP_STRUCT__entry(__array(char, port, IFNAMSIZ)
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u32, value)
				     __field(u8, retries_left)),
		    TP_fast_assign(strscpy(__entry->port, netdev_name(ndev),
					   IFNAMSIZ);
				   __entry->qpn = qpn;
				   __entry->psn = psn;
				   __entry->value = value;
				   __entry->retries_left = retries_left;),
		    TP_printk("port=%s qpn=%u psn=%#x reason=%s retries_left=%u",
			      __entry->port, __entry->qpn, __entry->psn,
			      __print_symbolic(__entry->value,
					       { DRAY_TRACE_RETX_TIMEOUT,
						 "timeout" },
					       { DRAY_TRACE_RETX_SEQ,
						 "sequence" },
					       { DRAY_TRACE_RETX_PROBE,
						 "probe" }),
			      __entry->retries_left)
);

/* Go-back-N: the requester sends again from psn (value: the reason). */
DEFINE_EVENT(dray_req_class, dray_retransmit,
	     TP_PROTO(const struct net_device *ndev, u32 qpn, u32 psn,
		      u32 value, u8 retries_left),
	     TP_ARGS(ndev, qpn, psn, value, retries_left));

/* An RNR NAK: the requester waits value us before sending psn again. */
DEFINE_EVENT_PRINT(dray_req_class, dray_rnr_wait,
		   TP_PROTO(const struct net_device *ndev, u32 qpn, u32 psn,
			    u32 value, u8 retries_left),
		   TP_ARGS(ndev, qpn, psn, value, retries_left),
		   TP_printk("port=%s qpn=%u psn=%#x wait_us=%u retries_left=%u%s",
			     __entry->port, __entry->qpn, __entry->psn,
			     __entry->value, __entry->retries_left,
			     __entry->retries_left == 7 ? " (infinite)" : ""));

/* A CQE with an error status other than a flush (dray_queue.h codes). */
TRACE_EVENT(dray_cqe_err,
	    TP_PROTO(const struct net_device *ndev, u32 qpn, u32 cqn, bool sq,
		     u32 wqe_index, u8 status, u8 vendor_err),
	    TP_ARGS(ndev, qpn, cqn, sq, wqe_index, status, vendor_err),
	    TP_STRUCT__entry(__array(char, port, IFNAMSIZ)
			     __field(u32, qpn)
			     __field(u32, cqn)
			     __field(u32, wqe_index)
			     __field(bool, sq)
			     __field(u8, status)
			     __field(u8, vendor_err)),
	    TP_fast_assign(strscpy(__entry->port, netdev_name(ndev), IFNAMSIZ);
			   __entry->qpn = qpn;
			   __entry->cqn = cqn;
			   __entry->sq = sq;
			   __entry->wqe_index = wqe_index;
			   __entry->status = status;
			   __entry->vendor_err = vendor_err;),
	    TP_printk("port=%s qpn=%u cqn=%u %s wqe=%u status=%u vendor_err=%#x",
		      __entry->port, __entry->qpn, __entry->cqn,
		      __entry->sq ? "sq" : "rq", __entry->wqe_index,
		      __entry->status, __entry->vendor_err)
);

#endif /* DRAY_DEV_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dev_trace
#include <trace/define_trace.h>
