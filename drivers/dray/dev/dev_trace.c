// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the tracepoints of dev_trace.h are defined here. This
 * file calls nothing of the model: every file that raises an event only
 * uses the tracepoint symbols defined here.
 */

#define CREATE_TRACE_POINTS
#include "dev_trace.h"
