// SPDX-License-Identifier: GPL-2.0-only
/*
 * patwin: an experiment, not part of dray. Two kprobes widen the race
 * window of x86 PAT's untrack_pfn() between a process's munmap of a
 * VM_PFNMAP mapping and uverbs' disassociation of it at device removal:
 *
 *  - untrack_pfn(vma, 0, 0) by the mapping's own process (munmap, the
 *    mmap lock downgraded to read) waits own_ms first;
 *  - the page walk that untrack_pfn() makes after its VM_PAT check
 *    (6.1: follow_phys(); 6.12: follow_pfnmap_start()) waits walk_ms
 *    when another process's mm is walked (uverbs' disassociation, run
 *    by modprobe -r).
 *
 * A munmap that passes its wait while the disassociation waits in its walk
 * untracks and zaps the page first; the walk then finds no entry, and
 * untrack_pfn() warns.
 */
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/version.h>

static uint walk_ms = 100;
module_param(walk_ms, uint, 0444);
static uint own_ms = 30;
module_param(own_ms, uint, 0444);
static atomic_t walks = ATOMIC_INIT(0);
static atomic_t owns = ATOMIC_INIT(0);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define WALK_FN "follow_pfnmap_start"
static struct vm_area_struct *walk_vma(struct pt_regs *regs)
{
	return ((struct follow_pfnmap_args *)regs->di)->vma;
}
#else
#define WALK_FN "follow_phys"
static struct vm_area_struct *walk_vma(struct pt_regs *regs)
{
	return (struct vm_area_struct *)regs->di;
}
#endif

static int walk_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct vm_area_struct *vma = walk_vma(regs);

	if (vma && vma->vm_mm != current->mm) {
		atomic_inc(&walks);
		mdelay(walk_ms);
	}
	return 0;
}

static int untrack_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct vm_area_struct *vma = (struct vm_area_struct *)regs->di;

	if (vma && vma->vm_mm == current->mm && !regs->si && !regs->dx &&
	    (vma->vm_flags & VM_PFNMAP)) {
		atomic_inc(&owns);
		mdelay(own_ms);
	}
	return 0;
}

static struct kprobe walk_kp = { .symbol_name = WALK_FN, .pre_handler = walk_pre };
static struct kprobe untrack_kp = { .symbol_name = "untrack_pfn",
				    .pre_handler = untrack_pre };

static int __init patwin_init(void)
{
	int ret = register_kprobe(&walk_kp);

	if (ret)
		return ret;
	ret = register_kprobe(&untrack_kp);
	if (ret)
		unregister_kprobe(&walk_kp);
	return ret;
}

static void __exit patwin_exit(void)
{
	unregister_kprobe(&untrack_kp);
	unregister_kprobe(&walk_kp);
	pr_info("patwin: %d walks of another mm delayed, %d own untracks\n",
		atomic_read(&walks), atomic_read(&owns));
}
module_init(patwin_init);
module_exit(patwin_exit);
MODULE_DESCRIPTION("widen the PAT untrack race window (experiment)");
MODULE_LICENSE("GPL");
