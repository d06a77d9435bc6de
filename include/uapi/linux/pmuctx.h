/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pmuctx: per-task performance counter contexts, driven through ioctls on
 * /dev/pmuctx.  Every structure that crosses the boundary starts with its
 * size so old and new userspace keep working (Documentation/uapi.rst).
 */
#ifndef _UAPI_LINUX_PMUCTX_H
#define _UAPI_LINUX_PMUCTX_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PMUCTX_ABI_VERSION	1

#define PMUCTX_IOC_MAGIC	0xB4

/* Features the loaded module offers, in pmuctx_info.features. */
#define PMUCTX_FEAT_SOFTWARE	(1ULL << 0)	/* software counters */
#define PMUCTX_FEAT_HARDWARE	(1ULL << 1)	/* a hardware PMU backend */
#define PMUCTX_FEAT_OVERFLOW	(1ULL << 2)	/* overflow interrupts */
#define PMUCTX_FEAT_MULTIPLEX	(1ULL << 3)	/* more counters than the PMU has */
#define PMUCTX_FEAT_ADDR_RANGE	(1ULL << 4)	/* PMUCTX_TYPE_RANGE counters */
#define PMUCTX_FEAT_RANGE_SAMPLES (1ULL << 5)	/* ... with a sample_period */
/*
 * Hardware counters go through the kernel's own perf events (the fallback
 * when the kernel's PMU driver owns the PMU): perf schedules and
 * multiplexes them, contexts holding them never swap, and there are no
 * self-reads (Documentation/design.rst, "The stock-kernel fallback").
 */
#define PMUCTX_FEAT_PERF_EVENTS	(1ULL << 6)
/* struct pmuctx_sample has @period (PMUCTX_IOC_SAMPLES' sample_size). */
#define PMUCTX_FEAT_SAMPLE_PERIOD (1ULL << 7)
/* PMUCTX_ATTR_FREQ on hardware counters (the native backends). */
#define PMUCTX_FEAT_FREQ	(1ULL << 8)
/* struct pmuctx_sample has @cpu. */
#define PMUCTX_FEAT_SAMPLE_CPU	(1ULL << 9)
/* PMUCTX_ATTR_CALLCHAIN. */
#define PMUCTX_FEAT_CALLCHAIN	(1ULL << 10)
/* A kernel-mode sample's chain starts with its kernel part (native backends). */
#define PMUCTX_FEAT_KERNEL_CALLCHAIN (1ULL << 11)
/* pmuctx_attr.sample_regs_user and sample_stack_user (struct pmuctx_sample_user). */
#define PMUCTX_FEAT_SAMPLE_USER	(1ULL << 12)
/*
 * With PMUCTX_FEAT_PERF_EVENTS: the counters are perf's per-CPU events,
 * shared by every context (backend=shared): contexts holding them swap,
 * and sampling counters are refused (Documentation/design.rst, "The
 * shared backend").
 */
#define PMUCTX_FEAT_PERF_SHARED	(1ULL << 13)
/*
 * A mapped hardware counter's self-read page gives its counter index
 * while the counter counts (RDPMC at CPL 3, EL0 PMU reads).  Without it
 * the page's index stays 0 or mmap() fails, and readers use read().
 */
#define PMUCTX_FEAT_SELF_READ	(1ULL << 14)

#define PMUCTX_BACKEND_NAME_LEN	32

/*
 * Address ranges (Documentation/ranges.rst).  What a range restricts: one
 * kind per counter, in the low byte of a PMUCTX_TYPE_RANGE counter's config.
 */
enum pmuctx_range_kind {
	PMUCTX_RANGE_INSN = 0,		/* instructions executed there */
	PMUCTX_RANGE_DATA = 1,		/* loads and stores */
	PMUCTX_RANGE_DATA_WRITE = 2,	/* stores */
	PMUCTX_RANGE_DATA_READ = 3,	/* loads */
	PMUCTX_RANGE_NR_KINDS,
};

#define PMUCTX_RANGE_KIND_MASK	0xffULL
/* In config: refuse (ERANGE) a plan that covers more than the request. */
#define PMUCTX_RANGE_EXACT	(1ULL << 8)
#define PMUCTX_RANGE_CONFIG_ALL	(PMUCTX_RANGE_KIND_MASK | PMUCTX_RANGE_EXACT)

/*
 * One bank of address-match registers the module can use: @nr of them,
 * each matching a naturally aligned block of 2^order bytes (min_order <=
 * order <= max_order), or with byte_select_order any contiguous bytes in
 * one aligned 2^byte_select_order block.  nr 0: none.
 */
struct pmuctx_range_caps {
	__u8 nr;
	__u8 min_order;
	__u8 max_order;
	__u8 byte_select_order;
};

struct pmuctx_info {
	__u32 size;		/* in: sizeof the caller's struct */
	__u32 abi_version;	/* out: PMUCTX_ABI_VERSION */
	char backend[PMUCTX_BACKEND_NAME_LEN];	/* "software", "armv8-pmuv3" */
	__u32 nr_general;	/* programmable hardware counters */
	__u32 nr_fixed;		/* fixed-function counters (arm64: cycles) */
	__u32 general_width;	/* bits of a programmable counter */
	__u32 fixed_width;	/* bits of a fixed counter */
	__u64 features;		/* PMUCTX_FEAT_* */
	__u64 hw_events[2];	/* arm64: PMCEID0/1, common events 0..63 */
	__u32 pmu_version;	/* arm64: ID_AA64DFR0_EL1.PMUVer */
	__u32 nr_sw_events;	/* software counter configs available */
	__u32 mux_interval_ms;	/* rotation interval of multiplexed contexts */
	__u32 reserved;
	/* PMUCTX_FEAT_ADDR_RANGE: the address-match hardware */
	__u32 range_kinds;	/* 1 << PMUCTX_RANGE_* that can be counted */
	__u32 range_fine_insn_order;	/* exact insn ranges in 2^n B; 0: none */
	struct pmuctx_range_caps range_data;	/* data watchpoints */
	struct pmuctx_range_caps range_insn;	/* instruction breakpoints */
};

/* Counter types (pmuctx_attr.type). */
enum pmuctx_type {
	PMUCTX_TYPE_HARDWARE = 0,	/* generic: config is PMUCTX_HW_* */
	PMUCTX_TYPE_SOFTWARE = 1,	/* config is PMUCTX_SW_* */
	PMUCTX_TYPE_RAW = 2,		/* config is the PMU's own event code */
	/*
	 * Hits in [range_start, range_end): config is a pmuctx_range_kind,
	 * maybe with PMUCTX_RANGE_EXACT.
	 */
	PMUCTX_TYPE_RANGE = 3,
	PMUCTX_TYPE_MAX,
};

enum pmuctx_hw_id {
	PMUCTX_HW_CPU_CYCLES = 0,
	PMUCTX_HW_INSTRUCTIONS = 1,
	PMUCTX_HW_MAX,
};

enum pmuctx_sw_id {
	PMUCTX_SW_TASK_CLOCK = 0,	/* ns on CPU */
	PMUCTX_SW_CONTEXT_SWITCHES = 1,
	PMUCTX_SW_CPU_MIGRATIONS = 2,
	PMUCTX_SW_PAGE_FAULTS = 3,	/* minor + major */
	PMUCTX_SW_PAGE_FAULTS_MIN = 4,
	PMUCTX_SW_PAGE_FAULTS_MAJ = 5,
	PMUCTX_SW_MAX,
};

/* pmuctx_attr.read_format: what read() returns, in this order. */
#define PMUCTX_FORMAT_TOTAL_TIME_ENABLED	(1ULL << 0)
#define PMUCTX_FORMAT_TOTAL_TIME_RUNNING	(1ULL << 1)
#define PMUCTX_FORMAT_ID			(1ULL << 2)
#define PMUCTX_FORMAT_GROUP			(1ULL << 3)
#define PMUCTX_FORMAT_STAMP			(1ULL << 4)	/* load/unload sequence */
#define PMUCTX_FORMAT_SLICES			(1ULL << 5)	/* struct pmuctx_slice_stats */
#define PMUCTX_FORMAT_ALL			((1ULL << 6) - 1)

/*
 * PMUCTX_FORMAT_SLICES: after each value (and its id), the statistics of
 * its slices, the stretches in which it counted on the PMU without a break
 * (its unit rotating out, or a disable, ends one; a task switch only
 * pauses it, with the context's time), pooled over the counter's family,
 * the current slice included.  The sums of the
 * counts c and the lengths t (ns) are the value and time_running, so with
 * these a reader can estimate the error of value * enabled / running
 * (Documentation/multiplexing.rst).  128-bit sums: low word first.
 */
struct pmuctx_slice_stats {
	__u64 slices;
	__u64 sum_count_sq[2];		/* sum of c * c */
	__u64 sum_count_time[2];	/* sum of c * t */
	__u64 sum_time_sq[2];		/* sum of t * t */
};

/* pmuctx_attr.flags */
#define PMUCTX_ATTR_DISABLED		(1ULL << 0)	/* start disabled */
#define PMUCTX_ATTR_INHERIT		(1ULL << 1)	/* follow fork and clone */
#define PMUCTX_ATTR_INHERIT_THREAD	(1ULL << 2)	/* follow clone(CLONE_THREAD) only */
#define PMUCTX_ATTR_EXCLUDE_USER	(1ULL << 3)
#define PMUCTX_ATTR_EXCLUDE_KERNEL	(1ULL << 4)
#define PMUCTX_ATTR_ENABLE_ON_EXEC	(1ULL << 5)
#define PMUCTX_ATTR_PINNED		(1ULL << 6)	/* group leader: never rotated out */
#define PMUCTX_ATTR_INHERIT_STAT	(1ULL << 7)	/* counts stay with tasks across swaps */
/* sample_period is a rate, samples a second: the module sets the period. */
#define PMUCTX_ATTR_FREQ		(1ULL << 8)
/*
 * Samples carry the task's user call chain (frame pointers), up to
 * PMUCTX_CALLCHAIN_MAX entries (PMUCTX_IOC_SAMPLES); a counter that
 * counts the kernel gets a kernel-mode sample's kernel chain first
 * (PMUCTX_FEAT_KERNEL_CALLCHAIN).
 */
#define PMUCTX_ATTR_CALLCHAIN		(1ULL << 9)
#define PMUCTX_ATTR_ALL			((1ULL << 10) - 1)

/*
 * Size-versioned: a smaller (older) struct is zero-extended, a larger
 * (newer) one is accepted only when the part this kernel does not know is
 * zero (else E2BIG).  PMUCTX_ATTR_SIZE_VER0 is the first published size.
 */
struct pmuctx_attr {
	__u32 size;
	__u32 type;		/* enum pmuctx_type */
	__u64 config;
	__u64 flags;		/* PMUCTX_ATTR_* */
	__u64 read_format;	/* PMUCTX_FORMAT_* */
	__u64 sample_period;	/* hardware counters: overflow period, 0 = none */
	/* PMUCTX_TYPE_RANGE: user addresses [range_start, range_end); else 0 */
	__u64 range_start;
	__u64 range_end;
	/*
	 * Sampling counters: the task's user registers each sample holds, a
	 * mask in perf's numbering for the architecture (asm/perf_regs.h:
	 * x86-64 without DS, ES, FS and GS; arm64 X0..PC), and the bytes of
	 * its user stack from the stack pointer up (a multiple of 8, at most
	 * PMUCTX_SAMPLE_STACK_MAX): perf's sample_regs_user and
	 * sample_stack_user, for unwinding from DWARF call frame information
	 * (struct pmuctx_sample_user).
	 */
	__u64 sample_regs_user;
	__u32 sample_stack_user;
	__u32 __reserved_1;	/* 0 */
};

#define PMUCTX_ATTR_SIZE_VER0	40
#define PMUCTX_ATTR_SIZE_VER1	56	/* range_start, range_end */
#define PMUCTX_ATTR_SIZE_VER2	72	/* sample_regs_user, sample_stack_user */

/* PMUCTX_OPEN target kinds: pmuctx_open_args.flags */
#define PMUCTX_OPEN_CLOEXEC	(1U << 0)	/* the new fd is close-on-exec */
#define PMUCTX_OPEN_PIDFD	(1U << 1)	/* target is a pidfd, not a pid */
#define PMUCTX_OPEN_ALL		((1U << 2) - 1)

struct pmuctx_open_args {
	__u64 attr;		/* pointer to struct pmuctx_attr */
	__s32 target;		/* 0 = the caller, else a pid (or pidfd) */
	__s32 group_fd;		/* group leader's counter fd, -1 = none */
	__u32 flags;		/* PMUCTX_OPEN_* */
	__u32 reserved;		/* must be 0 */
};

/* Counter fd ioctls: ENABLE/DISABLE/RESET take PMUCTX_IOC_FLAG_GROUP. */
#define PMUCTX_IOC_FLAG_GROUP	1U

/*
 * Statistics of the context a counter lives in, and of its family: the
 * original's context plus every clone's, live or exited.
 */
struct pmuctx_ctx_stats {
	__u32 size;		/* in: sizeof the caller's struct */
	__u32 nr_counters;	/* counters in this context */
	__u64 generation;	/* this context's cookie */
	__u64 family;		/* cookie of the family it belongs to, 0 = none */
	__u64 loads;		/* full loads of this context */
	__u64 swaps;		/* times it was handed on, loaded, by a swap */
	__u64 tree_loads;	/* loads over the whole family */
	__u64 tree_swaps;	/* swaps over the whole family */
	__u64 live_tasks;	/* live tasks holding this counter or a clone */
	__u64 exited_tasks;	/* holders that exited (clones folded back) */
	__u64 inherit_failed;	/* clones that could not be allocated */
	__u64 rotations;	/* multiplexing rotations of this context */
	__u64 tree_rotations;	/* rotations over the whole family */
	__u64 handoffs;		/* loads by a handoff from another context */
	__u64 tree_handoffs;	/* handoffs over the whole family */
};

/* One live clone in a process-tree read. */
struct pmuctx_tree_entry {
	__u32 tid;		/* task holding the clone's context */
	__u32 reserved;
	__u64 value;
	__u64 time_enabled;
	__u64 time_running;
};

struct pmuctx_tree_read {
	__u32 size;		/* in: sizeof the caller's struct */
	__u32 nr_entries;	/* in: room in entries; out: live clones */
	__u64 entries;		/* pointer to struct pmuctx_tree_entry[] */
	__u64 own_value;	/* the opened counter alone */
	__u64 exited_value;	/* sum over instances whose holder exited */
	__u64 exited_tasks;
	__u64 total;		/* own + live + exited, as read() */
};

/* One overflow of a sampling counter (or of one of its clones). */
struct pmuctx_sample {
	__u64 ip;		/* interrupted instruction */
	__u32 pid;		/* process (tgid) */
	__u32 tid;
	__u64 time;		/* CLOCK_MONOTONIC, ns */
	__u64 id;		/* counter id */
	/*
	 * The events this sample stands for: sample_period times the
	 * periods that ended at this interrupt (more than one when it came
	 * late or the counter was throttled).  Only with sample_size >= 40.
	 */
	__u64 period;
	/* The CPU the overflow was taken on.  Only with sample_size >= 48. */
	__u32 cpu;
	/*
	 * PMUCTX_ATTR_CALLCHAIN: the entries of the call chain that follow
	 * this struct in the caller's sample (sample_size - 48 bytes of
	 * room), innermost first: for a kernel-mode sample of a counter that
	 * counts the kernel, the kernel PC and the kernel return addresses
	 * (kernel addresses, at most PMUCTX_KERNEL_CALLCHAIN_MAX); then the
	 * user PC and the user return addresses.
	 */
	__u32 nr_callchain;
};

/* The most kernel entries at the start of a sample's call chain. */
#define PMUCTX_KERNEL_CALLCHAIN_MAX	32
/* The most entries a sample's call chain holds. */
#define PMUCTX_CALLCHAIN_MAX	64

/* The size of struct pmuctx_sample before @period. */
#define PMUCTX_SAMPLE_SIZE_VER0	32
/* Its whole size: where a call chain starts. */
#define PMUCTX_SAMPLE_SIZE_VER2	48

/*
 * The user part of a sample of a counter with sample_regs_user or
 * sample_stack_user.  Such a counter's record (PMUCTX_IOC_SAMPLES) is
 * struct pmuctx_sample; PMUCTX_CALLCHAIN_MAX entries of room for the call
 * chain if it has PMUCTX_ATTR_CALLCHAIN (nr_callchain of them used); this
 * struct; @nr_regs registers, those of the mask in order of their bits;
 * then sample_stack_user bytes of room for the stack, @stack_dyn of them
 * copied from the user stack pointer up.  The caller's sample_size must
 * hold all of it (PMUCTX_SAMPLE_USER_SIZE()).
 */
struct pmuctx_sample_user {
	/*
	 * perf's PERF_SAMPLE_REGS_ABI_*: 0 with no user registers to report
	 * (a kernel thread, an exiting task, a 32-bit task: no registers, no
	 * stack), 2 for a 64-bit task.
	 */
	__u32 abi;
	__u32 nr_regs;		/* registers that follow: the mask's, or 0 */
	/* The stack the sample may hold: the room, less what lies past the top of user space */
	__u32 stack_size;
	__u32 stack_dyn;	/* of those, the bytes copied: a fault ends it */
};

/* The most bytes of user stack a sample holds (perf's limit too). */
#define PMUCTX_SAMPLE_STACK_MAX	65528

/* The sample_size a counter with @chain (0 or 1), @nr_regs and @stack needs. */
#define PMUCTX_SAMPLE_USER_SIZE(chain, nr_regs, stack)			\
	(PMUCTX_SAMPLE_SIZE_VER2 + (chain) * PMUCTX_CALLCHAIN_MAX * 8 +	\
	 sizeof(struct pmuctx_sample_user) + (nr_regs) * 8 + (stack))

struct pmuctx_samples_read {
	__u32 size;		/* in: sizeof the caller's struct */
	__u32 nr;		/* in: room in samples; out: samples copied */
	__u64 samples;		/* pointer to struct pmuctx_sample[] */
	__u64 lost;		/* samples dropped because the ring was full */
	__u64 overflows;	/* overflows so far, over the whole family */
	/*
	 * in: sizeof the caller's struct pmuctx_sample, the stride of
	 * @samples (0: PMUCTX_SAMPLE_SIZE_VER0); out: the bytes of each that
	 * the module filled (the rest is zeroed).  Only with size >= 40.
	 */
	__u32 sample_size;
	__u32 __reserved;	/* 0 */
};

/*
 * mmap(fd, 4096, PROT_READ): a page that lets the counting task read its own
 * hardware counter without a system call.  Retry while @lock is odd or
 * changed; when @index is 0 the counter is not on this CPU's PMU (or is
 * disabled): use read().  Else, with n = index - 1 (arm64: PMEVCNTR<n>_EL0,
 * 31 = the cycle counter; x86: RDPMC with ECX = n, fixed counters 1<<30|k):
 *   value = offset + ((raw(n) - prev) & (width == 64 ? ~0 : 2^width - 1))
 * At offset 4096 the same count is in perf's layout (struct
 * perf_event_mmap_page, Documentation/uapi.rst).
 */
struct pmuctx_mmap_page {
	__u32 version;		/* 1 */
	__u32 lock;		/* seqcount: odd while the kernel updates */
	__u32 index;		/* hardware counter + 1, 0 = use read() */
	__u32 width;		/* bits of the hardware counter */
	__u64 offset;
	__u64 prev;
};

/* How one register of a range plan is programmed. */
enum pmuctx_range_span_type {
	PMUCTX_RANGE_SPAN_MASK = 0,	/* aligned 2^order bytes */
	PMUCTX_RANGE_SPAN_BYTES = 1,	/* contiguous bytes, byte select */
	PMUCTX_RANGE_SPAN_FINE = 2,	/* exact range, fine mode */
};

#define PMUCTX_RANGE_MAX_SPANS	8

/* What one address-match register of a plan covers: [base, base + size). */
struct pmuctx_range_span {
	__u64 base;
	__u64 size;
	__u32 order;		/* PMUCTX_RANGE_SPAN_MASK: size == 1 << order */
	__u32 type;		/* enum pmuctx_range_span_type */
};

/*
 * A range and the plan that covers it, as PAPI reports one: the programmed
 * range is [start - start_off, end + end_off).  PMUCTX_RANGE_PLAN (on
 * /dev/pmuctx) plans @config/@start/@end on this machine's hardware;
 * PMUCTX_IOC_RANGE (on a PMUCTX_TYPE_RANGE counter) returns its own.
 */
struct pmuctx_range {
	__u32 size;		/* in: sizeof the caller's struct */
	__u32 nr_spans;		/* out: registers the plan uses */
	__u64 config;		/* in (PLAN), out (IOC_RANGE): kind | flags */
	__u64 start;		/* requested [start, end) */
	__u64 end;
	__u64 start_off;	/* out: start - programmed start */
	__u64 end_off;		/* out: programmed end - end */
	struct pmuctx_range_span spans[PMUCTX_RANGE_MAX_SPANS];	/* out */
};

#define PMUCTX_INFO		_IOWR(PMUCTX_IOC_MAGIC, 0x00, struct pmuctx_info)
#define PMUCTX_OPEN		_IOW(PMUCTX_IOC_MAGIC, 0x01, struct pmuctx_open_args)
#define PMUCTX_RANGE_PLAN	_IOWR(PMUCTX_IOC_MAGIC, 0x02, struct pmuctx_range)

#define PMUCTX_IOC_ENABLE	_IO(PMUCTX_IOC_MAGIC, 0x10)
#define PMUCTX_IOC_DISABLE	_IO(PMUCTX_IOC_MAGIC, 0x11)
#define PMUCTX_IOC_RESET	_IO(PMUCTX_IOC_MAGIC, 0x12)
#define PMUCTX_IOC_ID		_IOR(PMUCTX_IOC_MAGIC, 0x13, __u64)
#define PMUCTX_IOC_STATS	_IOWR(PMUCTX_IOC_MAGIC, 0x14, struct pmuctx_ctx_stats)
#define PMUCTX_IOC_TREE_READ	_IOWR(PMUCTX_IOC_MAGIC, 0x15, struct pmuctx_tree_read)
#define PMUCTX_IOC_SAMPLES	_IOWR(PMUCTX_IOC_MAGIC, 0x16, struct pmuctx_samples_read)
#define PMUCTX_IOC_RANGE	_IOWR(PMUCTX_IOC_MAGIC, 0x17, struct pmuctx_range)

#endif /* _UAPI_LINUX_PMUCTX_H */
