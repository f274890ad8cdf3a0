// SPDX-License-Identifier: GPL-2.0
//! Host tests of what another context may do inside the windows of one
//! operation that the host machine opens on purpose: an interrupt between a
//! lockless free's reads and its cmpxchg16b, and a move to another CPU
//! while the slow path waits for pages with the CPU lock dropped. Each
//! test makes the other context change exactly the state the operation
//! read before the window, and checks that the operation reads it again.

use crate::host::{shim, Host};
use crate::platform::Platform;
use crate::slab::SlabHeader;
use crate::slub::{Cache, CpuSlab};
use crate::stat::Stat;
use crate::test_util::{alloc_on, machine, on_cpu, OnCpu, TestCache, CPUS, GFP_KERNEL, GFP_NOWAIT};
use std::collections::HashSet;

/// CPU `cpu`'s `(freelist, tid, slab)` for `c`.
fn cpu_pair(c: &TestCache, cpu: u32) -> (*mut u8, usize, *mut SlabHeader) {
    let (s, _) = c.cpu_state(cpu);
    // SAFETY: the cache's state of a possible CPU; no thread is on a CPU
    // while the tests read it, so nothing changes it meanwhile.
    let s: &CpuSlab = unsafe { &*s };
    (s.freelist, s.tid, s.slab)
}

/// Counter `s` of each simulated CPU.
fn per_cpu(c: &TestCache, s: Stat) -> Vec<usize> {
    let mut v = vec![0; CPUS as usize];
    c.stat_total(s, &mut v);
    v
}

/// The simulated interrupt of the next test: allocates one object of node
/// 1 without sleeping (`GFP_NOWAIT`). On CPU 0 (node 0) that retires the
/// CPU slab (a node mismatch) and makes a new slab of node 1 the CPU slab.
/// No asserts here: a panic cannot unwind through the C twin.
struct AllocOnNode1 {
    cache: *const Cache<Host>,
    got: *mut u8,
}

extern "C" fn alloc_on_node_1(arg: *mut core::ffi::c_void) {
    // SAFETY: `arg` is the test's `AllocOnNode1`, alive while the hook is
    // pending; the cache outlives the hook.
    let w = unsafe { &mut *arg.cast::<AllocOnNode1>() };
    // SAFETY: as above.
    w.got = unsafe { &*w.cache }.alloc(GFP_NOWAIT, 1);
}

/// A free into the CPU slab of a cache whose slab headers are outside the
/// slabs (16 KiB objects) takes the lockless push on the strength of the
/// CPU slab's base alone (`on_cpu_slab`), so the slab it names comes from
/// an unchecked snapshot. When the push's cmpxchg is lost, that slab may
/// be gone: the free must validate the object anew (`free_out_miss`), not
/// go on with the snapshot's slab. For a free of a live object the two
/// agree (the object keeps its slab alive); they part on a free that the
/// cache must refuse. Here CPU 0's slab has every object free, each freed
/// from CPU 1 onto the slab's own freelist (the first one freed ends it),
/// and CPU 0 frees that first object again. An interrupt just before the
/// free's cmpxchg (`rslub_host_set_irq_hook`) allocates on node 1: the
/// empty slab is retired, its pages given back, and its header block goes
/// to the interrupt's new slab, the next header allocated, as the
/// kernel's header cache hands it out (`rslub_host_set_recycle_headers`;
/// without that reuse the stale pointer names a dead header that still
/// says "empty", and going on with it refuses the free as well). The
/// snapshot's slab pointer then names the new CPU slab, and a free going
/// on with it pushed the given-back memory onto CPU 0's freelist: a plain
/// cache handed it out at the next allocation, a hardened one found it
/// there and isolated the new slab. Asserted, hardened and plain: the
/// cmpxchg was lost, the free refused (one error), the memory never handed
/// out, every later object distinct and counted, the cache sound.
#[test]
fn a_lost_free_cmpxchg_with_headers_outside_validates_the_object_anew() {
    let _m = machine();
    for harden in [true, false] {
        // No CPU partial list, no partial or empty slab kept: an emptied
        // slab goes back to the page allocator.
        let c = TestCache::with(16384, 0, 0, 0, 0, harden);
        assert!(c.layout.header_outside);
        let per = c.layout.objects;
        // CPU 0's slab, every object taken: its CPU freelist is empty, so
        // the free below writes null over the null that ends the slab's
        // own freelist (a double free deeper in a freelist would relink it
        // before the cmpxchg, whatever came after).
        let objs = alloc_on(&c, 0, per);
        let a = objs[0];
        let slab = Host::slab_meta(c.layout.slab_base(a) as *const u8) as *mut SlabHeader;
        on_cpu(1, || objs.iter().for_each(|&o| c.free(o)));
        assert_eq!(cpu_pair(&c, 0).0, std::ptr::null_mut());
        assert_eq!(cpu_pair(&c, 0).2, slab, "CPU 0 keeps the emptied slab");
        assert_eq!(c.usage().live_objects, 0);
        let (errors, lost) = (c.errors(), c.stat(Stat::CmpxchgDoubleCpuFail));
        let mut irq = AllocOnNode1 {
            cache: c.0,
            got: std::ptr::null_mut(),
        };
        // SAFETY: setters; `irq` outlives the hook, which fires in the
        // free below (checked after it).
        unsafe {
            shim::rslub_host_set_recycle_headers(true);
            shim::rslub_host_set_irq_hook(
                Some(alloc_on_node_1),
                std::ptr::from_mut(&mut irq).cast(),
                0,
            );
        }
        on_cpu(0, || c.free(a));
        let got = irq.got;
        assert!(!got.is_null(), "harden {harden}: the interrupt did not run");
        assert_eq!(
            c.stat(Stat::CmpxchgDoubleCpuFail),
            lost + 1,
            "harden {harden}: the free's cmpxchg was not lost"
        );
        assert!(!Host::addr_valid(a), "harden {harden}: the slab stayed");
        assert_eq!(
            cpu_pair(&c, 0).2,
            slab,
            "harden {harden}: the new CPU slab did not get the old header block"
        );
        assert_eq!(
            c.errors(),
            errors + 1,
            "harden {harden}: the free of a given-back object was not refused"
        );
        // Two slabs' worth more on CPU 0: live objects, none twice, and
        // never the given-back memory.
        let more = alloc_on(&c, 0, 2 * per);
        let mut seen = HashSet::from([got as usize]);
        for &o in &more {
            assert!(
                o != a && Host::addr_valid(o),
                "harden {harden}: {o:?} handed out, memory the cache gave back"
            );
            assert!(seen.insert(o as usize), "harden {harden}: {o:?} twice");
        }
        assert_eq!(c.usage().live_objects, 2 * per + 1, "harden {harden}");
        on_cpu(0, || {
            c.free(got);
            more.iter().for_each(|&o| c.free(o));
        });
        assert_eq!(c.usage().live_objects, 0, "harden {harden}");
        assert_eq!(c.validate(), 0, "harden {harden}");
        assert_eq!(c.errors(), errors + 1, "harden {harden}");
        assert_eq!(c.destroy(), Ok(()), "harden {harden}");
        // SAFETY: setter; frees the blocks it kept.
        unsafe { shim::rslub_host_set_recycle_headers(false) };
    }
}

/// The slow path drops the CPU lock to allocate a slab's pages when the
/// gfp flags allow sleeping (`CpuGuard::unlocked`); the task may wake up
/// on another CPU, and the guard must then name that CPU's state, whose
/// lock it takes again. Here the page allocation of CPU 0's first
/// allocation moves the task to CPU 1, which has a CPU slab of its own
/// (`rslub_host_set_migrate_in_alloc_pages`). The new slab must become
/// CPU 1's (its old one deactivated to make room), counted there, and CPU
/// 0's state must be left as it was: a guard still naming CPU 0 installed
/// the slab on the CPU the task had left, writing a state that another
/// task may be using under that CPU's lock, and left CPU 1 with its old
/// slab. Afterwards allocations on CPU 1 take the rest of the new slab,
/// and allocations and frees on both CPUs hand out every object once, with
/// the counts right and the cache sound.
#[test]
fn a_move_during_the_page_allocation_installs_the_slab_on_the_new_cpu() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    let per = c.layout.objects;
    let x = alloc_on(&c, 1, 1)[0];
    let old = SlabHeader::of(x, &c.layout);
    assert_eq!(cpu_pair(&c, 1).2, old);
    let before = cpu_pair(&c, 0);
    assert!(before.2.is_null(), "CPU 0 starts without a slab");
    let (slabs, flushes) = (
        per_cpu(&c, Stat::AllocSlab),
        per_cpu(&c, Stat::CpuslabFlush),
    );
    // SAFETY: setter; used by the next page allocation.
    unsafe { shim::rslub_host_set_migrate_in_alloc_pages(1) };
    let (o, now) = {
        let _cpu = OnCpu::enter(0);
        let o = c.alloc(GFP_KERNEL, -1);
        // SAFETY: a read of this thread's CPU.
        (o, unsafe { shim::rslub_host_current_cpu() })
    };
    assert!(!o.is_null());
    assert_eq!(now, 1, "the page allocation did not move the task");
    let new = SlabHeader::of(o, &c.layout);
    assert_ne!(new, old);
    assert_eq!(
        cpu_pair(&c, 0),
        before,
        "the state of the CPU the task left was changed"
    );
    let (freelist, _, slab) = cpu_pair(&c, 1);
    assert_eq!(slab, new, "the new slab is not CPU 1's");
    assert!(!freelist.is_null());
    let plus_one_on = |v: &[usize], cpu: usize| {
        v.iter()
            .enumerate()
            .map(|(i, &n)| n + usize::from(i == cpu))
            .collect::<Vec<_>>()
    };
    assert_eq!(per_cpu(&c, Stat::AllocSlab), plus_one_on(&slabs, 1));
    assert_eq!(per_cpu(&c, Stat::CpuslabFlush), plus_one_on(&flushes, 1));
    // The rest of the new slab on CPU 1, then more on both CPUs.
    let rest = alloc_on(&c, 1, per - 1);
    assert!(rest.iter().all(|&r| SlabHeader::of(r, &c.layout) == new));
    assert_eq!(per_cpu(&c, Stat::AllocSlab), plus_one_on(&slabs, 1));
    let mut live = vec![x, o];
    live.extend(rest);
    live.extend(alloc_on(&c, 0, 2 * per));
    live.extend(alloc_on(&c, 1, per));
    let set: HashSet<usize> = live.iter().map(|&p| p as usize).collect();
    assert_eq!(set.len(), live.len(), "an object handed out twice");
    assert_eq!(c.usage().live_objects, live.len());
    // Half freed on CPU 0, half on CPU 1: local and remote frees.
    let (a, b) = live.split_at(live.len() / 2);
    on_cpu(0, || a.iter().for_each(|&p| c.free(p)));
    on_cpu(1, || b.iter().for_each(|&p| c.free(p)));
    assert_eq!(c.usage().live_objects, 0);
    assert_eq!(c.errors(), 0);
    assert_eq!(c.validate(), 0);
    assert_eq!(c.destroy(), Ok(()));
}
