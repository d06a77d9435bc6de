// SPDX-License-Identifier: GPL-2.0
/* Probe: nth_page() exists (gone by 7.2: one allocation's pages are contiguous). */
#include <linux/mm.h>

struct page *pmuctx_probe(struct page *page);
struct page *pmuctx_probe(struct page *page)
{
	return nth_page(page, 1);
}
