// SPDX-License-Identifier: GPL-2.0
/*
 * The exit reasons' names, for the guest's steal (steal.c): vmlat.ko's
 * own table (vmlat/core/exit_codes.c), compiled into this module too.
 */
#include "exit_codes.c"
