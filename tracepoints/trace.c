// SPDX-License-Identifier: GPL-2.0
/* The definitions of vmlat's trace events (vmlat_trace.h). */
#define CREATE_TRACE_POINTS
#include "vmlat_trace.h"
