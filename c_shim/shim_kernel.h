/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What shim.c and shim_hot.c share inside the kernel (not seen by bindgen).
 */
#ifndef RSLUB_SHIM_KERNEL_H
#define RSLUB_SHIM_KERNEL_H

#include <linux/jump_label.h>

/* On: the fast path's cmpxchg16b takes a lock prefix (the bench's "cmpxchg" suite). */
DECLARE_STATIC_KEY_FALSE(rslub_locked_fastpath);

#endif /* RSLUB_SHIM_KERNEL_H */
