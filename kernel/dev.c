// SPDX-License-Identifier: GPL-2.0
/* /dev/pmuctx: the ioctl entry point of the ABI (Documentation/uapi.rst). */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "pmuctx.h"

/*
 * Copy a size-versioned struct from userspace: an older (smaller) caller is
 * zero-extended; a newer (larger) one is accepted only if the tail we do not
 * know is zero, so new fields can never be silently ignored.
 */
static int pmuctx_copy_sized_in(void *dst, size_t ksize,
				const void __user *src, u32 usize)
{
	return copy_struct_from_user(dst, ksize, src, usize);
}

static long pmuctx_ioctl_info(struct pmuctx_info __user *uinfo)
{
	const struct pmuctx_hw_desc *hw = pmuctx_hw;
	struct pmuctx_info info;
	u32 usize;
	int err;

	if (get_user(usize, &uinfo->size))
		return -EFAULT;
	if (usize < offsetofend(struct pmuctx_info, abi_version))
		return -EINVAL;
	err = pmuctx_copy_sized_in(&info, sizeof(info), uinfo, usize);
	if (err)
		return err;

	memset(&info, 0, sizeof(info));
	info.size = min_t(u32, usize, sizeof(info));
	info.abi_version = PMUCTX_ABI_VERSION;
	info.features = PMUCTX_FEAT_SOFTWARE;
	if (hw) {
		strscpy(info.backend, hw->name, sizeof(info.backend));
		info.nr_general = hw->nr_general;
		info.nr_fixed = hw->nr_fixed;
		info.general_width = hw->general_width;
		info.fixed_width = hw->fixed_width;
		info.pmu_version = hw->pmu_version;
		info.hw_events[0] = hw->hw_events[0];
		info.hw_events[1] = hw->hw_events[1];
		info.features |= hw->features;
	} else {
		strscpy(info.backend, "software", sizeof(info.backend));
	}

	if (copy_to_user(uinfo, &info, info.size))
		return -EFAULT;
	return 0;
}

static long pmuctx_dev_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PMUCTX_INFO:
		return pmuctx_ioctl_info(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations pmuctx_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = pmuctx_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice pmuctx_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pmuctx",
	.fops = &pmuctx_dev_fops,
	.mode = 0666,
};

int pmuctx_dev_register(void)
{
	return misc_register(&pmuctx_miscdev);
}

void pmuctx_dev_unregister(void)
{
	misc_deregister(&pmuctx_miscdev);
}
