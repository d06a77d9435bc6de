// SPDX-License-Identifier: GPL-2.0
/*
 * Identify the running CPU in the mapfile's format: x86 from the CPUID
 * instruction ("GenuineIntel-6-55-4"), arm64 from MIDR_EL1 (sysfs first,
 * /proc/cpuinfo as fallback since older kernels lack the sysfs file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "pmuctx_events.h"

#if defined(__x86_64__) || defined(__i386__)
static int detect_x86(char *buf, size_t len)
{
	unsigned int eax, ebx, ecx, edx, family, model, stepping;
	char vendor[13];

	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return -1;
	memcpy(vendor, &ebx, 4);
	memcpy(vendor + 4, &edx, 4);
	memcpy(vendor + 8, &ecx, 4);
	vendor[12] = 0;
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return -1;
	family = (eax >> 8) & 0xf;
	model = (eax >> 4) & 0xf;
	stepping = eax & 0xf;
	if (family == 0xf)
		family += (eax >> 20) & 0xff;
	if (family == 6 || family >= 0xf)
		model |= ((eax >> 16) & 0xf) << 4;
	snprintf(buf, len, "%s-%u-%X-%X", vendor, family, model, stepping);
	return 0;
}
#endif

static int __attribute__((unused)) read_midr_sysfs(unsigned long long *midr)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llx", midr) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int __attribute__((unused)) read_midr_cpuinfo(unsigned long long *midr)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	unsigned long impl = 0, arch = 0, var = 0, part = 0, rev = 0;
	int seen = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		unsigned long v;

		if (!colon)
			continue;
		v = strtoul(colon + 1, NULL, 0);
		if (!strncmp(line, "CPU implementer", 15))
			impl = v, seen |= 1;
		else if (!strncmp(line, "CPU architecture", 16))
			arch = v, seen |= 2;
		else if (!strncmp(line, "CPU variant", 11))
			var = v, seen |= 4;
		else if (!strncmp(line, "CPU part", 8))
			part = v, seen |= 8;
		else if (!strncmp(line, "CPU revision", 12)) {
			rev = v, seen |= 16;
			if (seen == 31)
				break;	/* first CPU is enough */
		}
	}
	fclose(f);
	if (seen != 31)
		return -1;
	/* cpuinfo prints "8" for ARMv8; MIDR says 0xf ("see ID registers") */
	if (arch >= 8)
		arch = 0xf;
	*midr = (impl << 24) | (var << 20) | (arch << 16) | (part << 4) | rev;
	return 0;
}

int pmuctx_detect_cpuid(char *buf, size_t len, const char **arch)
{
#if defined(__x86_64__) || defined(__i386__)
	*arch = "x86";
	return detect_x86(buf, len);
#else
	unsigned long long midr;

	*arch = "arm64";
	if (read_midr_sysfs(&midr) && read_midr_cpuinfo(&midr))
		return -1;
	snprintf(buf, len, "0x%016llx", midr);
	return 0;
#endif
}
