/* The emulation's ABI header (src/nvml/nvml_abi.h, written without NVIDIA's)
 * against NVIDIA's nvml.h: every value, size and field offset the emulation
 * relies on is static-asserted equal, so a mismatch fails the build. Built
 * only where CMake found NVIDIA's nvml.h (FABMEM_NVML_INCLUDE_DIR); elsewhere
 * a test of the same name reports that it was skipped. The emulation's names
 * are included with an abi_ prefix (FAB_NVML) so the two headers can meet in
 * one file. */
#include <nvml.h>
#include <stddef.h>

#define FAB_NVML(name) abi_##name
#include "src/nvml/nvml_abi.h"

#include "fabtest.h"

#define SAME_VALUE(name, value)                                                 \
    _Static_assert((long long)name == (long long)abi_##name, #name " differs"); \
    _Static_assert((long long)name == (long long)(value), #name " value");
#define SAME_RETURN(name, value, text) SAME_VALUE(NVML_##name, value)
#define SAME_CONSTANT(name, value)                                                        \
    _Static_assert((long long)(name) == (long long)abi_FAB__NVML_##name, #name " differs"); \
    _Static_assert((long long)(name) == (long long)(value), #name " value");

FAB_NVML_RETURN_LIST(SAME_RETURN)
FAB_NVML_ENABLE_STATE_LIST(SAME_VALUE)
FAB_NVML_NVLINK_CAPABILITY_LIST(SAME_VALUE)
FAB_NVML_TOPOLOGY_LEVEL_LIST(SAME_VALUE)
FAB_NVML_P2P_STATUS_LIST(SAME_VALUE)
FAB_NVML_P2P_CAPS_LIST(SAME_VALUE)
FAB_NVML_CONSTANT_LIST(SAME_CONSTANT)
FAB_NVML_PCIE_CONSTANT_LIST(SAME_CONSTANT)
FAB_NVML_NVLINK_DEVICE_TYPE_LIST(SAME_VALUE)
FAB_NVML_VALUE_TYPE_LIST(SAME_VALUE)
_Static_assert((long long)NVML_NVLINK_CAP_COUNT == (long long)abi_NVML_NVLINK_CAP_COUNT,
               "NVML_NVLINK_CAP_COUNT");

#define SAME_TYPE(t) _Static_assert(sizeof(t) == sizeof(abi_##t) && \
                                    _Alignof(t) == _Alignof(abi_##t), #t " size/alignment")
#define SAME_FIELD(t, f) _Static_assert(offsetof(t, f) == offsetof(abi_##t, f) && \
                                        sizeof(((t *)0)->f) == sizeof(((abi_##t *)0)->f), \
                                        #t "." #f " offset/size")

SAME_TYPE(nvmlReturn_t);
SAME_TYPE(nvmlDevice_t);
SAME_TYPE(nvmlEnableState_t);
SAME_TYPE(nvmlNvLinkCapability_t);
SAME_TYPE(nvmlGpuTopologyLevel_t);
SAME_TYPE(nvmlGpuP2PStatus_t);
SAME_TYPE(nvmlGpuP2PCapsIndex_t);
SAME_TYPE(nvmlGpuFabricState_t);
SAME_TYPE(nvmlPciInfo_t);
SAME_FIELD(nvmlPciInfo_t, busIdLegacy);
SAME_FIELD(nvmlPciInfo_t, domain);
SAME_FIELD(nvmlPciInfo_t, bus);
SAME_FIELD(nvmlPciInfo_t, device);
SAME_FIELD(nvmlPciInfo_t, pciDeviceId);
SAME_FIELD(nvmlPciInfo_t, pciSubSystemId);
SAME_FIELD(nvmlPciInfo_t, busId);
SAME_TYPE(nvmlPciInfoExt_v1_t);
SAME_FIELD(nvmlPciInfoExt_v1_t, version);
SAME_FIELD(nvmlPciInfoExt_v1_t, domain);
SAME_FIELD(nvmlPciInfoExt_v1_t, pciSubSystemId);
SAME_FIELD(nvmlPciInfoExt_v1_t, baseClass);
SAME_FIELD(nvmlPciInfoExt_v1_t, subClass);
SAME_FIELD(nvmlPciInfoExt_v1_t, busId);
_Static_assert(nvmlPciInfoExt_v1 == FAB_NVML_PCI_INFO_EXT_V1, "nvmlPciInfoExt_v1");
_Static_assert(nvmlSystemConfComputeSettings_v1 == FAB_NVML_CONF_COMPUTE_SETTINGS_V1,
               "nvmlSystemConfComputeSettings_v1");
SAME_TYPE(nvmlConfComputeSystemState_t);
SAME_FIELD(nvmlConfComputeSystemState_t, environment);
SAME_FIELD(nvmlConfComputeSystemState_t, ccFeature);
SAME_FIELD(nvmlConfComputeSystemState_t, devToolsMode);
SAME_TYPE(nvmlSystemConfComputeSettings_v1_t);
SAME_FIELD(nvmlSystemConfComputeSettings_v1_t, version);
SAME_FIELD(nvmlSystemConfComputeSettings_v1_t, environment);
SAME_FIELD(nvmlSystemConfComputeSettings_v1_t, multiGpuMode);
SAME_TYPE(nvmlIntNvLinkDeviceType_t);
SAME_TYPE(nvmlProcessInfo_v1_t);
SAME_FIELD(nvmlProcessInfo_v1_t, usedGpuMemory);
SAME_TYPE(nvmlProcessInfo_t);
SAME_FIELD(nvmlProcessInfo_t, usedGpuMemory);
SAME_FIELD(nvmlProcessInfo_t, computeInstanceId);
SAME_TYPE(nvmlMemory_t);
SAME_FIELD(nvmlMemory_t, total);
SAME_FIELD(nvmlMemory_t, free);
SAME_FIELD(nvmlMemory_t, used);
SAME_TYPE(nvmlMemory_v2_t);
SAME_FIELD(nvmlMemory_v2_t, version);
SAME_FIELD(nvmlMemory_v2_t, total);
SAME_FIELD(nvmlMemory_v2_t, reserved);
SAME_FIELD(nvmlMemory_v2_t, free);
SAME_FIELD(nvmlMemory_v2_t, used);
SAME_TYPE(nvmlGpuFabricInfo_t);
SAME_FIELD(nvmlGpuFabricInfo_t, clusterUuid);
SAME_FIELD(nvmlGpuFabricInfo_t, status);
SAME_FIELD(nvmlGpuFabricInfo_t, cliqueId);
SAME_FIELD(nvmlGpuFabricInfo_t, state);
SAME_TYPE(nvmlGpuFabricInfo_v2_t);
SAME_FIELD(nvmlGpuFabricInfo_v2_t, version);
SAME_FIELD(nvmlGpuFabricInfo_v2_t, clusterUuid);
SAME_FIELD(nvmlGpuFabricInfo_v2_t, status);
SAME_FIELD(nvmlGpuFabricInfo_v2_t, cliqueId);
SAME_FIELD(nvmlGpuFabricInfo_v2_t, state);
SAME_FIELD(nvmlGpuFabricInfo_v2_t, healthMask);
SAME_TYPE(nvmlGpuFabricInfo_v3_t);
SAME_FIELD(nvmlGpuFabricInfo_v3_t, version);
SAME_FIELD(nvmlGpuFabricInfo_v3_t, clusterUuid);
SAME_FIELD(nvmlGpuFabricInfo_v3_t, status);
SAME_FIELD(nvmlGpuFabricInfo_v3_t, cliqueId);
SAME_FIELD(nvmlGpuFabricInfo_v3_t, state);
SAME_FIELD(nvmlGpuFabricInfo_v3_t, healthMask);
SAME_FIELD(nvmlGpuFabricInfo_v3_t, healthSummary);
SAME_TYPE(nvmlGpuFabricInfoV_t);
SAME_TYPE(nvmlPlatformInfo_v1_t);
SAME_FIELD(nvmlPlatformInfo_v1_t, version);
SAME_FIELD(nvmlPlatformInfo_v1_t, ibGuid);
SAME_FIELD(nvmlPlatformInfo_v1_t, rackGuid);
SAME_FIELD(nvmlPlatformInfo_v1_t, chassisPhysicalSlotNumber);
SAME_FIELD(nvmlPlatformInfo_v1_t, computeSlotIndex);
SAME_FIELD(nvmlPlatformInfo_v1_t, nodeIndex);
SAME_FIELD(nvmlPlatformInfo_v1_t, peerType);
SAME_FIELD(nvmlPlatformInfo_v1_t, moduleId);
SAME_TYPE(nvmlPlatformInfo_v2_t);
SAME_FIELD(nvmlPlatformInfo_v2_t, version);
SAME_FIELD(nvmlPlatformInfo_v2_t, ibGuid);
SAME_FIELD(nvmlPlatformInfo_v2_t, chassisSerialNumber);
SAME_FIELD(nvmlPlatformInfo_v2_t, slotNumber);
SAME_FIELD(nvmlPlatformInfo_v2_t, trayIndex);
SAME_FIELD(nvmlPlatformInfo_v2_t, hostId);
SAME_FIELD(nvmlPlatformInfo_v2_t, peerType);
SAME_FIELD(nvmlPlatformInfo_v2_t, moduleId);
SAME_TYPE(nvmlPlatformInfo_t);
SAME_TYPE(nvmlValueType_t);
SAME_TYPE(nvmlValue_t);
SAME_TYPE(nvmlFieldValue_t);
SAME_FIELD(nvmlFieldValue_t, fieldId);
SAME_FIELD(nvmlFieldValue_t, scopeId);
SAME_FIELD(nvmlFieldValue_t, timestamp);
SAME_FIELD(nvmlFieldValue_t, latencyUsec);
SAME_FIELD(nvmlFieldValue_t, valueType);
SAME_FIELD(nvmlFieldValue_t, nvmlReturn);
SAME_FIELD(nvmlFieldValue_t, value);

/* The version tags NVIDIA's macros compute, against the emulation's. */
_Static_assert(nvmlGpuFabricInfo_v2 == FAB_NVML_GPU_FABRIC_INFO_V2, "nvmlGpuFabricInfo_v2");
_Static_assert(nvmlGpuFabricInfo_v3 == FAB_NVML_GPU_FABRIC_INFO_V3, "nvmlGpuFabricInfo_v3");
_Static_assert(nvmlMemory_v2 == FAB_NVML_MEMORY_V2, "nvmlMemory_v2");
_Static_assert(nvmlPlatformInfo_v1 == FAB_NVML_PLATFORM_INFO_V1, "nvmlPlatformInfo_v1");
_Static_assert(nvmlPlatformInfo_v2 == FAB_NVML_PLATFORM_INFO_V2, "nvmlPlatformInfo_v2");

/* The checks above ran when this file compiled; the test records that. */
static void abi_matches_nvidia_nvml_h(void **state)
{
    (void)state;
    assert_int_equal(sizeof(nvmlGpuFabricInfoV_t), sizeof(abi_nvmlGpuFabricInfoV_t));
    assert_int_equal(nvmlGpuFabricInfo_v2, 0x02000024u);
    assert_int_equal(nvmlGpuFabricInfo_v3, 0x03000028u);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(abi_matches_nvidia_nvml_h),
};

FAB_TEST_MAIN_NO_HELPERS("nvml", tests)
