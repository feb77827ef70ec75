/* A program outside the tree, built against the installed fabmem with nothing
 * but `pkg-config --cflags --libs fabmem`: it must compile, link and run. */
#include <fabmem.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    fab_uuid_t uuid = {{0xfa, 0xb0}};
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 2u << 20);
    fab_memory_t *memory = NULL;
    fab_handle_t handle, received;
    if (fab_memory_allocate(1, uuid, &props, &memory) != FAB_SUCCESS ||
        fab_memory_export(memory, &handle) != FAB_SUCCESS ||
        fab_handle_from_bytes(handle.bytes, sizeof(handle.bytes), &received) != FAB_SUCCESS) {
        fprintf(stderr, "consumer: the installed library misbehaves\n");
        return 1;
    }
    printf("consumer: %s, handle of %zu bytes\n", fab_status_name(FAB_SUCCESS), fab_handle_size(&received));
    fab_memory_destroy(memory);
    return strcmp(fab_status_string(FAB_ERROR_INVALID_HANDLE), "invalid resource handle") != 0;
}
