/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fuzz build: the model's tracepoints (drivers/dray/dev/dev_trace.h)
 * compile to nothing, as in a kernel without CONFIG_TRACEPOINTS: each
 * trace_<event>() is an empty inline function.
 */
#ifndef DRAY_FUZZ_TRACEPOINT_H
#define DRAY_FUZZ_TRACEPOINT_H

#define TP_PROTO(args...)	args
#define TP_ARGS(args...)	args

#define TRACE_EVENT(name, proto, args, tstruct, assign, print)	\
	static inline void trace_##name(proto) {}
#define DECLARE_EVENT_CLASS(name, proto, args, tstruct, assign, print)
#define DEFINE_EVENT(template, name, proto, args)			\
	static inline void trace_##name(proto) {}
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	static inline void trace_##name(proto) {}

#endif /* DRAY_FUZZ_TRACEPOINT_H */
