/* Loads libcuda.so.1 by its soname, as CUDA programs and libraries do, and
 * asks it for the driver version: it must be fabmem's emulation, found
 * through the environment that fabmem_test_environment gives a test. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "driver_version: %s\n", dlerror());
        return 1;
    }
    int (*get_version)(int *) = (int (*)(int *))dlsym(lib, "cuDriverGetVersion");
    int version = 0;
    if (get_version == NULL || get_version(&version) != 0 || version <= 0) {
        fprintf(stderr, "driver_version: no cuDriverGetVersion answer\n");
        return 1;
    }
    Dl_info info;
    if (dladdr((void *)get_version, &info) == 0 || info.dli_fname == NULL) {
        fprintf(stderr, "driver_version: cannot tell where the driver came from\n");
        return 1;
    }
    printf("driver %d from %s\n", version, info.dli_fname);
    return 0;
}
