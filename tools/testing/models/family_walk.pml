/*
 * SPDX-License-Identifier: GPL-2.0
 *
 * The family walk's pairing (Documentation/design.rst, "fam->enable_mutex,
 * fam->closing, enable_seq"), as a model SPIN checks exhaustively
 * (scripts/check-models).  What is modelled, each next to the code it
 * stands for:
 *
 * - shards and their bits (struct pmuctx_family: shards, shard_cpus);
 *   a shard's lock is an atomic block, as its critical sections exclude
 *   each other;
 * - a fork (kernel/inherit.c): the fill under the parent's ctx->lock
 *   copies the parent's instance and the original's enable_seq, then
 *   pmuctx_fork_publish() sets the shard's bit (a full barrier after a
 *   new one: atomic_inc_return() of shard_gen), and under the shard's
 *   lock re-reads enable_seq, takes family_on if it moved or is odd, and
 *   lists the clone unless closing is set;
 * - swaps and handoffs move contexts between tasks, so the instance a
 *   fork copies is any live instance of the family whose task may run:
 *   the original's, or a published clone's (a clone's task first runs
 *   after its fork published it, and a swap needs the next task's
 *   notifier, registered after the publication): the forker picks one
 *   nondeterministically;
 * - a clone's exit (pmuctx_counter_fold_into_parent()): off its shard's
 *   list and into that shard's totals in one step;
 * - counting: a tick adds one to any live enabled instance whose task may
 *   run (as above: the original's or a published clone's);
 * - family enable (pmuctx_counter_family_enable()), reset
 *   (pmuctx_counter_family_reset()) and close
 *   (pmuctx_counter_retire_clones()).
 *
 * Memory: the stores the pairing is about may stay in their CPU's store
 * buffer past later loads (the store-buffering reordering that full
 * barriers exist for, allowed by x86-TSO and by arm64): the walk's
 * enable_seq/family_on and closing stores, and the fork's bit store.  A
 * full barrier drains them; a lock's release makes them visible to the
 * next holder of that lock only (release/acquire), which is all arm64's
 * spinlocks give (x86's locked acquire drains everything: with
 * -DX86_LOCKS a lock's acquire drains the acquirer's buffer too).
 * Otherwise sequentially consistent; each lock's critical sections are
 * atomic blocks.
 *
 * Mutations (-D): each removes one rule the design leans on, and the
 * checker must then find a losing interleaving (scripts/check-models
 * runs them all): NO_FORK_MB (the fork's barrier after its bit),
 * NO_WALK_MB (enable's and close's barrier after their store),
 * NO_RECHECK (publish trusts the fill's copy), NO_CLOSING_CHECK
 * (publish lists a clone of a closing original).
 */

#define NSH	2	/* shards: CPU 0's and CPU 1's */
#define NI	4	/* instances: 0 is the original, 1..3 clones */

bool sbit[NSH];		/* visible bits */
bool sbit_buf[NSH];	/* a fork's bit still in its CPU's store buffer */
byte seq;		/* the original's enable_seq, as visible */
byte seq_buf;		/* the walk's pending enable_seq (0: none) */
bool family_on;
bool on_buf;
bool closing;
bool closing_buf;

bool exists[NI];	/* filled */
bool listed[NI];	/* on its shard's children list */
bool dead[NI];		/* holder exited: folded */
bool retired[NI];	/* left its context (close) */
bool en[NI];
byte shard[NI];
byte cseq[NI];		/* enable_seq the fill copied */
byte cnt[NI];
byte sh_total[NSH];	/* exited clones' counts */

byte ticks;		/* counted events since the start */
bool enabler_done, resetter_done, closer_done;
byte forks_done;
byte reset_from;	/* ticks when the reset began */
bool walk_held[NSH];	/* the walk released shard s's lock (release) */
bool walk_held_orig;	/* ... or the original's ctx->lock */
bool reset_checked;

#define live(i)	(exists[i] && !dead[i] && !retired[i])

/* The walk's CPU drains its pending stores (a barrier, a locked op). */
inline walk_drain() {
	if
	:: seq_buf != 0 -> seq = seq_buf; family_on = on_buf; seq_buf = 0
	:: else -> skip
	fi;
	if
	:: closing_buf -> closing = true; closing_buf = false
	:: else -> skip
	fi
}

inline fork_drain(s) {
	if
	:: sbit_buf[s] -> sbit[s] = true; sbit_buf[s] = false
	:: else -> skip
	fi
}

/* Store buffers drain on their own at any time (FIFO per CPU). */
active proctype drainer()
{
	byte s;
end_drain:
	do
	:: atomic { seq_buf != 0 || closing_buf -> walk_drain() }
	:: atomic { sbit_buf[0] -> fork_drain(0) }
	:: atomic { sbit_buf[1] -> fork_drain(1) }
	od
}

/* Whoever runs counts into the instance its context holds. */
active proctype ticker()
{
end_tick:
	do
	:: atomic { ticks < 3 && live(0) && en[0] -> cnt[0]++; ticks++ }
	:: atomic { ticks < 3 && live(1) && listed[1] && en[1] -> cnt[1]++; ticks++ }
	:: atomic { ticks < 3 && live(2) && listed[2] && en[2] -> cnt[2]++; ticks++ }
	:: atomic { ticks < 3 && live(3) && listed[3] && en[3] -> cnt[3]++; ticks++ }
	od
}

/* A fork on CPU @s of clone @n from whichever live instance the forker holds. */
proctype fork(byte n; byte s)
{
	byte p, v;

	/* The fill, under the parent's ctx->lock. */
	atomic {
		if
		:: live(0) -> p = 0
		:: live(1) && listed[1] && n != 1 -> p = 1
		:: live(2) && listed[2] && n != 2 -> p = 2
		:: live(3) && listed[3] && n != 3 -> p = 3
		fi;
		/* A closing original is not copied (pmuctx_fork_fill()). */
		if
		:: closing -> forks_done++; goto out
		:: else -> skip
		fi;
		/* The original's ctx->lock after the walk's: its stores. */
		if
		:: p == 0 && walk_held_orig -> walk_drain()
		:: else -> skip
		fi;
		cseq[n] = seq;
		en[n] = en[p];
		shard[n] = s;
		exists[n] = true
	}
	/* pmuctx_fork_publish(): the bit, once per CPU. */
	if
	:: !sbit[s] && !sbit_buf[s] ->
		sbit_buf[s] = true;
#ifndef NO_FORK_MB
		atomic { fork_drain(s) }	/* atomic_inc_return(&shard_gen) */
#endif
	:: else -> skip
	fi;
	/* Under the shard's lock: after the walk's release of it, its stores. */
	atomic {
#ifdef X86_LOCKS
		fork_drain(s);
#endif
		if
		:: walk_held[s] -> walk_drain()
		:: else -> skip
		fi;
		v = seq;
#ifndef NO_RECHECK
		if
		:: cseq[n] != v || (v & 1) -> en[n] = family_on
		:: else -> skip
		fi;
#endif
#ifndef NO_CLOSING_CHECK
		if
		:: !closing -> listed[n] = true
		:: else -> retired[n] = true	/* the child sweeps it */
		fi;
#else
		listed[n] = true;
#endif
		forks_done++
	}
out:
	skip
}

/* A clone's holder exits: its count moves into its shard's totals. */
proctype exiter(byte i)
{
end_exit:
	atomic {
		(exists[i] && listed[i] && !dead[i]);
		dead[i] = true;
		listed[i] = false;
		sh_total[shard[i]] = sh_total[shard[i]] + cnt[i];
		cnt[i] = 0
	}
}

/* pmuctx_counter_family_enable(c, true), the original disabled before. */
proctype enabler()
{
	byte s, i;

	on_buf = true;
	seq_buf = seq + 1;		/* odd, release: family_on first */
#ifndef NO_WALK_MB
	atomic { walk_drain() }		/* smp_mb() */
#endif
	atomic {	/* the original's own ctx->lock */
#ifdef X86_LOCKS
		walk_drain();
#endif
		en[0] = true;
		walk_held_orig = true
	}
	for (s : 0 .. NSH - 1) {
		if
		:: sbit[s] ->
			atomic {
#ifdef X86_LOCKS
				walk_drain();
#endif
				walk_held[s] = true;
				for (i : 1 .. NI - 1) {
					if
					:: listed[i] && shard[i] == s && !dead[i] -> en[i] = true
					:: else -> skip
					fi
				}
			}
		:: else -> skip
		fi
	}
	atomic { walk_drain(); seq = seq + 1; enabler_done = true }
}

/* pmuctx_counter_family_reset(), then the read that follows it. */
proctype resetter()
{
	byte s, i, sum;

	atomic { reset_from = ticks; cnt[0] = 0 }
	for (s : 0 .. NSH - 1) {
		if
		:: sbit[s] ->
			atomic {
				sh_total[s] = 0;
				for (i : 1 .. NI - 1) {
					if
					:: listed[i] && shard[i] == s -> cnt[i] = 0
					:: else -> skip
					fi
				}
			}
		:: else -> skip
		fi
	}
	/* A read right after: nothing counted before the reset began. */
	atomic {
		sum = cnt[0] + sh_total[0] + sh_total[1];
		for (i : 1 .. NI - 1) {
			if
			:: listed[i] -> sum = sum + cnt[i]
			:: else -> skip
			fi
		}
		assert(sum <= ticks - reset_from);
		resetter_done = true
	}
}

/* pmuctx_counter_retire_clones(): the original's file is released. */
proctype closer()
{
	byte s, i;

	closing_buf = true;
#ifndef NO_WALK_MB
	atomic { walk_drain() }		/* smp_mb() */
#endif
	for (s : 0 .. NSH - 1) {
		if
		:: sbit[s] ->
			atomic {
#ifdef X86_LOCKS
				walk_drain();
#endif
				walk_held[s] = true;
				for (i : 1 .. NI - 1) {
					if
					:: listed[i] && shard[i] == s ->
						listed[i] = false; retired[i] = true
					:: else -> skip
					fi
				}
			}
		:: else -> skip
		fi
	}
	atomic { walk_drain(); closer_done = true }
}

init {
	byte i;

	atomic {
		exists[0] = true;
		/* One clone published on CPU 0's shard before the races. */
		exists[1] = true; listed[1] = true; shard[1] = 0; sbit[0] = true;
		cseq[1] = 0;
#if defined(CHECK_ENABLE)
		run enabler();
		run fork(2, 1);		/* a fork on the other CPU's new shard */
		run fork(3, 0);		/* and one on the used shard */
		run exiter(1);
#elif defined(CHECK_RESET)
		en[0] = true; en[1] = true;
		cnt[0] = 1; cnt[1] = 1;
		run resetter();
		run fork(2, 1);
		run fork(3, 0);
		run exiter(1);
#elif defined(CHECK_CLOSE)
		run closer();
		run fork(2, 1);
		run fork(3, 0);
		run exiter(1);
#endif
	}
#if defined(CHECK_ENABLE)
	(enabler_done && forks_done == 2);
	atomic {
		/* Every live instance counts once enable returned. */
		for (i : 0 .. NI - 1) {
			assert(!exists[i] || dead[i] || retired[i] || en[i])
		}
	}
#elif defined(CHECK_RESET)
	(resetter_done && forks_done == 2)
#elif defined(CHECK_CLOSE)
	(closer_done && forks_done == 2);
	atomic {
		/* Nothing keeps counting into a closed original. */
		for (i : 1 .. NI - 1) {
			assert(!exists[i] || dead[i] || retired[i])
		}
	}
#endif
}
