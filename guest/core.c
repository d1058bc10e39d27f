// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat.ko's pure code that the guest's steal (steal.c) needs, compiled
 * into this module too: the exit reasons' names (vmlat/core/exit_codes.c)
 * and the JSON escape of a name (vmlat/core/escape.c).
 */
#include "exit_codes.c"
#include "escape.c"
