/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz build: no tracepoint is defined (see ../linux/tracepoint.h). */
