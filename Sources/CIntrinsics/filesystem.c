#include "filesystem.h"

#include <sys/vfs.h>

int notes_is_kernel_file_system(const char *path) {
    struct statfs fs;
    if (statfs(path, &fs) != 0) return 0;
    switch ((unsigned long)fs.f_type) {
    case 0x9FA0UL:     /* proc */
    case 0x62656572UL: /* sysfs */
    case 0x0027E0EBUL: /* cgroup */
    case 0x63677270UL: /* cgroup2 */
    case 0x64626720UL: /* debugfs */
    case 0x74726163UL: /* tracefs */
    case 0x73636673UL: /* securityfs */
        return 1;
    default:
        return 0;
    }
}
