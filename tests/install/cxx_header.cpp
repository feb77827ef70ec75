// The public headers compile as C++ and link against the C library.
#include <fabmem.h>

#include <cstdio>

int main()
{
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 4096);
    fab_uuid_t uuid = {{1}};
    fab_memory_t *memory = nullptr;
    if (fab_memory_allocate(1, uuid, &props, &memory) != FAB_SUCCESS)
        return 1;
    fab_handle_t handle;
    fab_status_t status = fab_memory_export(memory, &handle);
    fab_memory_destroy(memory);
    std::printf("cxx: %s\n", fab_status_name(status));
    return status == FAB_SUCCESS ? 0 : 1;
}
