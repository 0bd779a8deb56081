/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz build: the errno values, then see ../fuzz_kernel.h. */
#include_next <linux/errno.h>
#include "../fuzz_kernel.h"
