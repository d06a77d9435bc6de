// SPDX-License-Identifier: GPL-2.0
/*
 * The PAPI presets the installed PAPI defines on this (or, with
 * LIBPFM_FORCE_PMU, another) CPU, one name per line: the live reference
 * the PAPI test compares pmuctx with.  libpapi is loaded at run time, so
 * no PAPI headers are needed.  Exit 2 when libpapi cannot be loaded or
 * initialised.
 */
#include <dlfcn.h>
#include <stdio.h>

#define PAPI_VER_7_0 0x07000000	/* PAPI_VER_CURRENT of PAPI 7.0 */
#define PAPI_PRESET_MASK 0x80000000
#define PAPI_ENUM_EVENTS 0
#define PAPI_ENUM_FIRST 1
#define PAPI_OK 0

int main(void)
{
	void *lib = dlopen("libpapi.so.7.0", RTLD_NOW);
	int (*init)(int), (*next)(int *, int), (*name)(int, char *), (*available)(int);
	char buf[1024];
	int code = (int)PAPI_PRESET_MASK;

	if (!lib)
		return 2;
	*(void **)&init = dlsym(lib, "PAPI_library_init");
	*(void **)&next = dlsym(lib, "PAPI_enum_event");
	*(void **)&name = dlsym(lib, "PAPI_event_code_to_name");
	*(void **)&available = dlsym(lib, "PAPI_query_event");
	if (!init || !next || !name || !available || init(PAPI_VER_7_0) != PAPI_VER_7_0)
		return 2;
	if (next(&code, PAPI_ENUM_FIRST) != PAPI_OK)
		return 0;
	do {
		if (available(code) == PAPI_OK && name(code, buf) == PAPI_OK)
			printf("%s\n", buf);
	} while (next(&code, PAPI_ENUM_EVENTS) == PAPI_OK);
	return 0;
}
