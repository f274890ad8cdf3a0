/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rslub's API limits. Self-contained (no kernel headers): bindgen reads this
 * file through c_shim/shim.h, so the Rust side uses the same values.
 */
#ifndef _RSLUB_LIMITS_H
#define _RSLUB_LIMITS_H

/* Longest accepted cache name, in bytes, without the terminating NUL. */
#define RSLUB_NAME_MAX 63

/* Largest object size a cache accepts. */
#define RSLUB_MAX_OBJECT_SIZE 16384

#endif /* _RSLUB_LIMITS_H */
