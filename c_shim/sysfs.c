// SPDX-License-Identifier: GPL-2.0
/*
 * The shim's sysfs directories: /sys/kernel/rslub (the defaults the Rust
 * side names, then "serve" and "serve_refused") and one kobject per cache
 * under it, whose attributes the Rust side lists by name and mode. Every
 * show and store is forwarded to Rust with the attribute's index; this
 * file is kobject and attribute plumbing only.
 */
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "shim.h"

struct rslub_attr {
	struct kobj_attribute ka;
	unsigned int index;
};

#define RSLUB_ROOT_ATTRS 8

struct rslub_root {
	struct kobject *kobj;
	struct rslub_attr attrs[RSLUB_ROOT_ATTRS];
	struct attribute *ptrs[RSLUB_ROOT_ATTRS + 1];
	struct attribute_group group;
};

static ssize_t rslub_root_show(struct kobject *kobj, struct kobj_attribute *ka,
			       char *buf)
{
	struct rslub_attr *a = container_of(ka, struct rslub_attr, ka);

	return rslub_rust_sysfs_root_show(a->index, buf);
}

static ssize_t rslub_serve_show(struct kobject *kobj, struct kobj_attribute *ka,
				char *buf)
{
	return rslub_rust_serve_show(buf);
}

static ssize_t rslub_serve_store(struct kobject *kobj, struct kobj_attribute *ka,
				 const char *buf, size_t len)
{
	return rslub_rust_serve_store(buf, len);
}

static ssize_t rslub_serve_refused_show(struct kobject *kobj,
					struct kobj_attribute *ka, char *buf)
{
	return rslub_rust_serve_refused_show(buf);
}

void *rslub_shim_sysfs_root_create(const char *const *names, unsigned int n)
{
	struct rslub_root *r;
	unsigned int i;

	/* n read-only defaults, then "serve" and "serve_refused". */
	if (n + 2 > RSLUB_ROOT_ATTRS)
		return NULL;
	r = kzalloc_obj(*r);
	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		sysfs_attr_init(&r->attrs[i].ka.attr);
		r->attrs[i].ka.attr.name = names[i];
		r->attrs[i].ka.attr.mode = 0444;
		r->attrs[i].ka.show = rslub_root_show;
		r->attrs[i].index = i;
		r->ptrs[i] = &r->attrs[i].ka.attr;
	}
	sysfs_attr_init(&r->attrs[n].ka.attr);
	r->attrs[n].ka.attr.name = "serve";
	r->attrs[n].ka.attr.mode = 0644;
	r->attrs[n].ka.show = rslub_serve_show;
	r->attrs[n].ka.store = rslub_serve_store;
	r->ptrs[n] = &r->attrs[n].ka.attr;
	/*
	 * serve_refused walks every kernel cache under slab_mutex: root's
	 * alone, as /proc/slabinfo is.
	 */
	sysfs_attr_init(&r->attrs[n + 1].ka.attr);
	r->attrs[n + 1].ka.attr.name = "serve_refused";
	r->attrs[n + 1].ka.attr.mode = 0400;
	r->attrs[n + 1].ka.show = rslub_serve_refused_show;
	r->ptrs[n + 1] = &r->attrs[n + 1].ka.attr;
	r->group.attrs = r->ptrs;
	r->kobj = kobject_create_and_add("rslub", kernel_kobj);
	if (!r->kobj)
		goto free;
	if (sysfs_create_group(r->kobj, &r->group))
		goto put;
	return r;
put:
	kobject_put(r->kobj);
free:
	kfree(r);
	return NULL;
}

void rslub_shim_sysfs_root_destroy(void *root)
{
	struct rslub_root *r = root;

	sysfs_remove_group(r->kobj, &r->group);
	kobject_put(r->kobj);
	kfree(r);
}

struct rslub_dir {
	struct kobject kobj;
	void *cache;
	unsigned int n;
	struct attribute **ptrs;	/* n + 1, NULL-terminated */
	struct attribute_group group;
	struct rslub_attr attrs[];
};

static void rslub_dir_release(struct kobject *kobj)
{
	struct rslub_dir *d = container_of(kobj, struct rslub_dir, kobj);

	kfree(d->ptrs);
	kfree(d);
}

static const struct kobj_type rslub_dir_type = {
	.release = rslub_dir_release,
	.sysfs_ops = &kobj_sysfs_ops,
};

static ssize_t rslub_attr_show(struct kobject *kobj, struct kobj_attribute *ka,
			       char *buf)
{
	struct rslub_dir *d = container_of(kobj, struct rslub_dir, kobj);
	struct rslub_attr *a = container_of(ka, struct rslub_attr, ka);

	return rslub_rust_sysfs_show(d->cache, a->index, buf);
}

static ssize_t rslub_attr_store(struct kobject *kobj, struct kobj_attribute *ka,
				const char *buf, size_t len)
{
	struct rslub_dir *d = container_of(kobj, struct rslub_dir, kobj);
	struct rslub_attr *a = container_of(ka, struct rslub_attr, ka);

	return rslub_rust_sysfs_store(d->cache, a->index, buf, len);
}

void *rslub_shim_sysfs_cache_add(void *root_handle, const char *name, void *cache,
				 const char *const *names,
				 const unsigned short *modes, unsigned int n)
{
	struct rslub_dir *d;
	unsigned int i;

	d = kzalloc(struct_size(d, attrs, n), GFP_KERNEL);
	if (!d)
		return NULL;
	d->ptrs = kcalloc(n + 1, sizeof(*d->ptrs), GFP_KERNEL);
	if (!d->ptrs) {
		kfree(d);
		return NULL;
	}
	d->cache = cache;
	d->n = n;
	for (i = 0; i < n; i++) {
		struct rslub_attr *a = &d->attrs[i];

		sysfs_attr_init(&a->ka.attr);
		a->ka.attr.name = names[i];
		a->ka.attr.mode = modes[i];
		a->ka.show = (modes[i] & 0444) ? rslub_attr_show : NULL;
		a->ka.store = (modes[i] & 0222) ? rslub_attr_store : NULL;
		a->index = i;
		d->ptrs[i] = &a->ka.attr;
	}
	d->group.attrs = d->ptrs;
	if (kobject_init_and_add(&d->kobj, &rslub_dir_type,
				 ((struct rslub_root *)root_handle)->kobj, "%s", name))
		goto put;
	if (sysfs_create_group(&d->kobj, &d->group)) {
		kobject_del(&d->kobj);
		goto put;
	}
	kobject_uevent(&d->kobj, KOBJ_ADD);
	return d;
put:
	kobject_put(&d->kobj);
	return NULL;
}

void rslub_shim_sysfs_cache_remove(void *dir)
{
	struct rslub_dir *d = dir;

	if (!d)
		return;
	kobject_del(&d->kobj);
	kobject_put(&d->kobj);
}
