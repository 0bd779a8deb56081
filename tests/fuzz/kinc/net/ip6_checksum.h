/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz build: see ../fuzz_kernel.h. */
#include "../fuzz_kernel.h"
