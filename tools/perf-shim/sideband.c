// SPDX-License-Identifier: GPL-2.0
/*
 * perf's side-band records on pmuctx.  perf's kernel writes a COMM record
 * at each exec and an MMAP2 record at each executable mapping, so that
 * its reader can name a sample's process and resolve its addresses
 * (perf record, then perf report).  pmuctx records neither; this file
 * writes them from /proc/<pid>/comm and /proc/<pid>/maps when a ring's
 * sample names a process it has not described, or an address outside
 * what it described (a library loaded since), just before that sample.
 * The process must still be there: a sample drained after its process
 * was reaped stays unnamed, as perf shows a sample it has no map for.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sideband.h"

#define SIDEBAND_TASKS	64	/* processes a ring remembers, then it starts over */
#define SIDEBAND_RANGES	64	/* executable mappings remembered a process */
#define MAPS_BYTES	(256 * 1024)

struct sideband_task {
	uint32_t pid;
	unsigned int nr;
	struct {
		uint64_t start, end;
	} exec[SIDEBAND_RANGES];
};

struct sideband {
	bool mmap2;
	unsigned int nr, next;
	struct sideband_task tasks[SIDEBAND_TASKS];
	char maps[MAPS_BYTES];	/* one drain per ring at a time: ours alone */
};

struct sideband *sideband_create(bool mmap2)
{
	struct sideband *sb = calloc(1, sizeof(*sb));

	if (sb)
		sb->mmap2 = mmap2;
	return sb;
}

void sideband_free(struct sideband *sb)
{
	free(sb);
}

/* "/proc/<pid>/<what>" into @buf, without stdio (a signal handler may call us). */
static void proc_path(char *buf, uint32_t pid, const char *what)
{
	char digits[12];
	int n = 0;

	do {
		digits[n++] = '0' + pid % 10;
		pid /= 10;
	} while (pid);
	strcpy(buf, "/proc/");
	buf += strlen(buf);
	while (n)
		*buf++ = digits[--n];
	*buf++ = '/';
	strcpy(buf, what);
}

/* The whole file into @buf (NUL-terminated); its length, or -1. */
static long read_file(const char *path, char *buf, size_t size)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC), n, got = 0;

	if (fd < 0)
		return -1;
	while ((size_t)got < size - 1) {
		n = syscall(SYS_read, fd, buf + got, size - 1 - got);
		if (n <= 0)
			break;
		got += n;
	}
	syscall(SYS_close, fd);
	buf[got] = 0;
	return got;
}

static uint64_t hex(const char **p)
{
	uint64_t v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v << 4 | (c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (c - 'a' + 10);
		else
			return v;
	}
}

static uint64_t dec(const char **p)
{
	uint64_t v = 0;

	while (**p >= '0' && **p <= '9')
		v = v * 10 + (*(*p)++ - '0');
	return v;
}

static void skip_spaces(const char **p)
{
	while (**p == ' ')
		(*p)++;
}

static struct sideband_task *find(struct sideband *sb, uint32_t pid)
{
	unsigned int i;

	for (i = 0; i < sb->nr; i++)
		if (sb->tasks[i].pid == pid)
			return &sb->tasks[i];
	return NULL;
}

static bool known(const struct sideband_task *t, uint64_t ip)
{
	unsigned int i;

	for (i = 0; i < t->nr; i++)
		if (ip >= t->exec[i].start && ip < t->exec[i].end)
			return true;
	return false;
}

static void emit_comm(struct sideband *sb, uint32_t pid, uint32_t tid, sideband_emit_t emit,
		      void *ctx)
{
	struct {
		uint32_t pid, tid;
		char comm[24];
	} body;
	char path[40];
	long n;

	proc_path(path, pid, "comm");
	memset(&body, 0, sizeof(body));
	n = read_file(path, sb->maps, 64);
	if (n <= 0)
		return;
	if (sb->maps[n - 1] == '\n')
		sb->maps[--n] = 0;
	memcpy(body.comm, sb->maps, n < 16 ? n : 16);
	body.pid = pid;
	body.tid = tid;
	/* the name an exec gave it: perf starts the process's history there */
	emit(ctx, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, &body,
	     8 + ((strlen(body.comm) + 8) & ~7UL));
}

/* One "start-end perms offset maj:min inode path" line of an executable mapping. */
static void emit_map(struct sideband *sb, struct sideband_task *t, const char *line,
		     sideband_emit_t emit, void *ctx)
{
	/* MMAP2's body; MMAP's is its start, the name right after pgoff */
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
		char filename[4096 + 8];	/* NUL-padded to 8 bytes */
	} b;
	const size_t mmap_head = offsetof(typeof(b), maj);
	const char *p = line, *name;
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min, prot = 0, flags;
	size_t len, padded;

	start = hex(&p);
	if (*p++ != '-')
		return;
	end = hex(&p);
	skip_spaces(&p);
	if (p[0] == 'r')
		prot |= PROT_READ;
	if (p[1] == 'w')
		prot |= PROT_WRITE;
	if (p[2] != 'x')
		return;
	prot |= PROT_EXEC;
	flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 4;
	skip_spaces(&p);
	pgoff = hex(&p);
	skip_spaces(&p);
	maj = hex(&p);
	if (*p == ':')
		p++;
	min = hex(&p);
	skip_spaces(&p);
	ino = dec(&p);
	skip_spaces(&p);
	name = p;
	len = strcspn(name, "\n");
	/* files, and the vDSO; perf has nothing to resolve in other anonymous text */
	if (!len || len >= sizeof(b.filename) - 8 ||
	    (name[0] != '/' && strncmp(name, "[vdso]", len)))
		return;
	if (t->nr < SIDEBAND_RANGES) {
		t->exec[t->nr].start = start;
		t->exec[t->nr].end = end;
		t->nr++;
	}
	memset(&b, 0, offsetof(typeof(b), filename));
	b.pid = b.tid = t->pid;
	b.addr = start;
	b.len = end - start;
	b.pgoff = pgoff;
	b.maj = maj;
	b.min = min;
	b.ino = ino;
	b.prot = prot;
	b.flags = flags;
	memcpy(b.filename, name, len);
	memset(b.filename + len, 0, 8);
	padded = (len + 8) & ~7UL;
	if (sb->mmap2) {
		emit(ctx, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &b,
		     offsetof(typeof(b), filename) + padded);
	} else {
		memmove((char *)&b + mmap_head, b.filename, padded);
		emit(ctx, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, &b, mmap_head + padded);
	}
}

void sideband_before_sample(struct sideband *sb, uint32_t pid, uint32_t tid, uint64_t ip,
			    sideband_emit_t emit, void *ctx)
{
	struct sideband_task *t = find(sb, pid);
	const char *line;
	char path[40];
	bool fresh = !t;

	if (t && known(t, ip))
		return;
	if (!t) {
		/* the oldest goes: a process seen again is described again */
		t = &sb->tasks[sb->nr < SIDEBAND_TASKS ? sb->nr++ : sb->next++ % SIDEBAND_TASKS];
		t->pid = pid;
	}
	proc_path(path, pid, "maps");
	if (fresh)
		emit_comm(sb, pid, tid, emit, ctx);
	if (read_file(path, sb->maps, sizeof(sb->maps)) <= 0)
		return;
	t->nr = 0;
	for (line = sb->maps; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0))
		emit_map(sb, t, line, emit, ctx);
	/* nothing new covers it: do not read /proc again for every such sample */
	if (!known(t, ip) && t->nr < SIDEBAND_RANGES) {
		t->exec[t->nr].start = ip;
		t->exec[t->nr].end = ip + 1;
		t->nr++;
	}
}
