#ifndef NOTES_FILESYSTEM_H
#define NOTES_FILESYSTEM_H

/// Whether `path` is on a file system the kernel makes up (proc, sysfs, cgroup, debugfs,
/// tracefs, securityfs, devpts, mqueue, bpf and the like), where no file can be made:
/// statfs(2)'s f_type, which Swift's Glibc module does not import. 0 when it cannot be told
/// (statfs failed), and on systems other than Linux.
int notes_is_kernel_file_system(const char *path);

#endif
