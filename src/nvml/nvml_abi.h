/* The NVML ABI that libnvidia-ml.so.1's emulation implements, declared fresh
 * from NVIDIA's public NVML API reference (a machine without NVIDIA's driver
 * has no nvml.h): NVML's type names, enumerator names, values and struct
 * layouts for the subset the emulation speaks (docs/nvml.md lists it and the
 * sources). Nothing here has behaviour.
 *
 * Every name is written through FAB_NVML(name), the name itself unless the
 * includer defines FAB_NVML first: tests/nvml/test_nvml_abi.c includes
 * NVIDIA's nvml.h, where CMake finds one, and then this header with
 * FAB_NVML(name) = abi_##name, and static-asserts that every value, size and
 * field offset equals NVIDIA's. Enumerations are X-macro lists so that the
 * check walks each one entry by entry, and the return codes are one list
 * with their nvmlErrorString texts. */
#ifndef FAB_NVML_ABI_H
#define FAB_NVML_ABI_H

#ifndef FAB_NVML
#define FAB_NVML(name) name
#endif

#define FAB__NVML_ENUMERATOR(name, value) FAB_NVML(name) = (value),
#define FAB__NVML_RETURN_ENUMERATOR(name, value, text) FAB_NVML(NVML_##name) = (value),

/* Every nvmlReturn_t: XX(name without NVML_, number, nvmlErrorString text).
 * The texts are the emulation's own words. */
#define FAB_NVML_RETURN_LIST(XX)                                                       \
    XX(SUCCESS, 0, "Success")                                                          \
    XX(ERROR_UNINITIALIZED, 1, "NVML was not initialized (call nvmlInit first)")       \
    XX(ERROR_INVALID_ARGUMENT, 2, "An argument is invalid")                            \
    XX(ERROR_NOT_SUPPORTED, 3, "Not supported on this device")                         \
    XX(ERROR_NO_PERMISSION, 4, "No permission")                                        \
    XX(ERROR_ALREADY_INITIALIZED, 5, "Already initialized")                            \
    XX(ERROR_NOT_FOUND, 6, "Not found")                                                \
    XX(ERROR_INSUFFICIENT_SIZE, 7, "The buffer is too small")                          \
    XX(ERROR_INSUFFICIENT_POWER, 8, "Insufficient power")                              \
    XX(ERROR_DRIVER_NOT_LOADED, 9, "The driver is not loaded")                         \
    XX(ERROR_TIMEOUT, 10, "Timed out")                                                 \
    XX(ERROR_IRQ_ISSUE, 11, "Interrupt request issue")                                 \
    XX(ERROR_LIBRARY_NOT_FOUND, 12, "A needed library was not found")                  \
    XX(ERROR_FUNCTION_NOT_FOUND, 13, "A needed function was not found")                \
    XX(ERROR_CORRUPTED_INFOROM, 14, "The infoROM is corrupted")                        \
    XX(ERROR_GPU_IS_LOST, 15, "The GPU has fallen off the bus")                        \
    XX(ERROR_RESET_REQUIRED, 16, "The GPU needs a reset")                              \
    XX(ERROR_OPERATING_SYSTEM, 17, "The operating system refused the call")            \
    XX(ERROR_LIB_RM_VERSION_MISMATCH, 18, "Library and driver versions differ")        \
    XX(ERROR_IN_USE, 19, "The GPU is in use")                                          \
    XX(ERROR_MEMORY, 20, "Out of memory")                                              \
    XX(ERROR_NO_DATA, 21, "No data")                                                   \
    XX(ERROR_VGPU_ECC_NOT_SUPPORTED, 22, "Not available on a vGPU with ECC enabled")                    \
    XX(ERROR_INSUFFICIENT_RESOURCES, 23, "Insufficient resources")                     \
    XX(ERROR_FREQ_NOT_SUPPORTED, 24, "Frequency not supported")                        \
    XX(ERROR_ARGUMENT_VERSION_MISMATCH, 25, "The structure's version is not supported") \
    XX(ERROR_DEPRECATED, 26, "Deprecated")                                             \
    XX(ERROR_NOT_READY, 27, "Not ready")                                               \
    XX(ERROR_GPU_NOT_FOUND, 28, "GPU not found")                                       \
    XX(ERROR_INVALID_STATE, 29, "Invalid state")                                       \
    XX(ERROR_RESET_TYPE_NOT_SUPPORTED, 30, "Reset type not supported")                 \
    XX(ERROR_UNKNOWN, 999, "Unknown error")

typedef enum FAB_NVML(nvmlReturn_enum) {
    FAB_NVML_RETURN_LIST(FAB__NVML_RETURN_ENUMERATOR)
} FAB_NVML(nvmlReturn_t);

#define FAB_NVML_ENABLE_STATE_LIST(XX) \
    XX(NVML_FEATURE_DISABLED, 0)       \
    XX(NVML_FEATURE_ENABLED, 1)
typedef enum FAB_NVML(nvmlEnableState_enum) {
    FAB_NVML_ENABLE_STATE_LIST(FAB__NVML_ENUMERATOR)
} FAB_NVML(nvmlEnableState_t);

#define FAB_NVML_NVLINK_CAPABILITY_LIST(XX) \
    XX(NVML_NVLINK_CAP_P2P_SUPPORTED, 0)    \
    XX(NVML_NVLINK_CAP_SYSMEM_ACCESS, 1)    \
    XX(NVML_NVLINK_CAP_P2P_ATOMICS, 2)      \
    XX(NVML_NVLINK_CAP_SYSMEM_ATOMICS, 3)   \
    XX(NVML_NVLINK_CAP_SLI_BRIDGE, 4)       \
    XX(NVML_NVLINK_CAP_VALID, 5)
typedef enum FAB_NVML(nvmlNvLinkCapability_enum) {
    FAB_NVML_NVLINK_CAPABILITY_LIST(FAB__NVML_ENUMERATOR)
    FAB_NVML(NVML_NVLINK_CAP_COUNT)
} FAB_NVML(nvmlNvLinkCapability_t);

#define FAB_NVML_TOPOLOGY_LEVEL_LIST(XX) \
    XX(NVML_TOPOLOGY_INTERNAL, 0)        \
    XX(NVML_TOPOLOGY_SINGLE, 10)         \
    XX(NVML_TOPOLOGY_MULTIPLE, 20)       \
    XX(NVML_TOPOLOGY_HOSTBRIDGE, 30)     \
    XX(NVML_TOPOLOGY_NODE, 40)           \
    XX(NVML_TOPOLOGY_SYSTEM, 50)
typedef enum FAB_NVML(nvmlGpuLevel_enum) {
    FAB_NVML_TOPOLOGY_LEVEL_LIST(FAB__NVML_ENUMERATOR)
} FAB_NVML(nvmlGpuTopologyLevel_t);

#define FAB_NVML_P2P_STATUS_LIST(XX)                  \
    XX(NVML_P2P_STATUS_OK, 0)                         \
    XX(NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED, 1)       \
    XX(NVML_P2P_STATUS_GPU_NOT_SUPPORTED, 2)          \
    XX(NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED, 3) \
    XX(NVML_P2P_STATUS_DISABLED_BY_REGKEY, 4)         \
    XX(NVML_P2P_STATUS_NOT_SUPPORTED, 5)              \
    XX(NVML_P2P_STATUS_UNKNOWN, 6)
typedef enum FAB_NVML(nvmlGpuP2PStatus_enum) {
    FAB_NVML_P2P_STATUS_LIST(FAB__NVML_ENUMERATOR)
} FAB_NVML(nvmlGpuP2PStatus_t);

#define FAB_NVML_P2P_CAPS_LIST(XX)     \
    XX(NVML_P2P_CAPS_INDEX_READ, 0)    \
    XX(NVML_P2P_CAPS_INDEX_WRITE, 1)   \
    XX(NVML_P2P_CAPS_INDEX_NVLINK, 2)  \
    XX(NVML_P2P_CAPS_INDEX_ATOMICS, 3) \
    XX(NVML_P2P_CAPS_INDEX_PCI, 4)     \
    XX(NVML_P2P_CAPS_INDEX_UNKNOWN, 5)
typedef enum FAB_NVML(nvmlGpuP2PCapsIndex_enum) {
    FAB_NVML_P2P_CAPS_LIST(FAB__NVML_ENUMERATOR)
} FAB_NVML(nvmlGpuP2PCapsIndex_t);

/* Plain constants nvml.h spells as macros: XX(name, value). */
#define FAB_NVML_CONSTANT_LIST(XX)                                     \
    XX(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE, 32)                         \
    XX(NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE, 16)                      \
    XX(NVML_NVLINK_MAX_LINKS, 36)                                      \
    XX(NVML_DEVICE_UUID_BUFFER_SIZE, 80)                               \
    XX(NVML_DEVICE_UUID_V2_BUFFER_SIZE, 96)                            \
    XX(NVML_DEVICE_NAME_BUFFER_SIZE, 64)                               \
    XX(NVML_DEVICE_NAME_V2_BUFFER_SIZE, 96)                            \
    XX(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, 80)                     \
    XX(NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE, 80)                       \
    XX(NVML_INIT_FLAG_NO_GPUS, 1)                                      \
    XX(NVML_INIT_FLAG_NO_ATTACH, 2)                                    \
    XX(NVML_INIT_FLAG_FORCE_INIT, 4)                                   \
    XX(NVML_GPU_FABRIC_UUID_LEN, 16)                                   \
    XX(NVML_GPU_FABRIC_STATE_NOT_SUPPORTED, 0)                         \
    XX(NVML_GPU_FABRIC_STATE_NOT_STARTED, 1)                           \
    XX(NVML_GPU_FABRIC_STATE_IN_PROGRESS, 2)                           \
    XX(NVML_GPU_FABRIC_STATE_COMPLETED, 3)                             \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_NOT_SUPPORTED, 0)       \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE, 1)                \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_FALSE, 2)               \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW, 0)               \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_DEGRADED_BW, 3)               \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_NOT_SUPPORTED, 0)    \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_TRUE, 1)             \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_FALSE, 2)            \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY, 2)            \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_RECOVERY, 3)            \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_NOT_SUPPORTED, 0)   \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE, 1)            \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_FALSE, 2)           \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY, 4)           \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_UNHEALTHY, 3)           \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_NOT_SUPPORTED, 0) \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_TRUE, 1)    \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_FALSE, 2)   \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY, 6)   \
    XX(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ACCESS_TIMEOUT_RECOVERY, 3)   \
    XX(NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED, 0)                \
    XX(NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY, 1)                      \
    XX(NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY, 2)                    \
    XX(NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY, 3)             \
    XX(NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, 90)                       \
    XX(NVML_FI_DEV_NVLINK_LINK_COUNT, 91)                              \
    XX(NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT, 147)                 \
    XX(NVML_FI_DEV_NVLINK_GET_SPEED, 164)                              \
    XX(NVML_FI_DEV_NVLINK_GET_STATE, 165)                              \
    XX(NVML_FI_DEV_NVLINK_GET_VERSION, 166)

#define FAB__NVML_CONSTANT_ENUMERATOR(name, value) FAB_NVML(FAB__NVML_##name) = (value),
enum { FAB_NVML_CONSTANT_LIST(FAB__NVML_CONSTANT_ENUMERATOR) };

#define FAB_NVML_VALUE_TYPE_LIST(XX)          \
    XX(NVML_VALUE_TYPE_DOUBLE, 0)             \
    XX(NVML_VALUE_TYPE_UNSIGNED_INT, 1)       \
    XX(NVML_VALUE_TYPE_UNSIGNED_LONG, 2)      \
    XX(NVML_VALUE_TYPE_UNSIGNED_LONG_LONG, 3) \
    XX(NVML_VALUE_TYPE_SIGNED_LONG_LONG, 4)   \
    XX(NVML_VALUE_TYPE_SIGNED_INT, 5)         \
    XX(NVML_VALUE_TYPE_UNSIGNED_SHORT, 6)
typedef enum FAB_NVML(nvmlValueType_enum) {
    FAB_NVML_VALUE_TYPE_LIST(FAB__NVML_ENUMERATOR)
    FAB_NVML(NVML_VALUE_TYPE_COUNT)
} FAB_NVML(nvmlValueType_t);

typedef union FAB_NVML(nvmlValue_st) {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
} FAB_NVML(nvmlValue_t);

/* One nvmlDeviceGetFieldValues request and its answer. */
typedef struct FAB_NVML(nvmlFieldValue_st) {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    FAB_NVML(nvmlValueType_t) valueType;
    FAB_NVML(nvmlReturn_t) nvmlReturn;
    FAB_NVML(nvmlValue_t) value;
} FAB_NVML(nvmlFieldValue_t);

/* NVML's struct version tag: the size in the low 24 bits, the version above. */
#define FAB_NVML_STRUCT_VERSION(size, ver) ((unsigned int)(size) | ((unsigned int)(ver) << 24U))

typedef struct FAB_NVML(nvmlDevice_st) *FAB_NVML(nvmlDevice_t);

/* The current PCI record (nvmlDeviceGetPciInfo_v3): the old 16-byte bus id
 * first, where the first versions had their only one. */
typedef struct FAB_NVML(nvmlPciInfo_st) {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} FAB_NVML(nvmlPciInfo_t);

typedef struct FAB_NVML(nvmlMemory_st) {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} FAB_NVML(nvmlMemory_t);

typedef struct FAB_NVML(nvmlMemory_v2_st) {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} FAB_NVML(nvmlMemory_v2_t);

typedef unsigned char FAB_NVML(nvmlGpuFabricState_t);

/* Version 1: no version field, no health. */
typedef struct FAB_NVML(nvmlGpuFabricInfo_st) {
    unsigned char clusterUuid[16];
    FAB_NVML(nvmlReturn_t) status;
    unsigned int cliqueId;
    FAB_NVML(nvmlGpuFabricState_t) state;
} FAB_NVML(nvmlGpuFabricInfo_t);

typedef struct FAB_NVML(nvmlGpuFabricInfo_v2_st) {
    unsigned int version;
    unsigned char clusterUuid[16];
    FAB_NVML(nvmlReturn_t) status;
    unsigned int cliqueId;
    FAB_NVML(nvmlGpuFabricState_t) state;
    unsigned int healthMask;
} FAB_NVML(nvmlGpuFabricInfo_v2_t);

typedef struct FAB_NVML(nvmlGpuFabricInfo_v3_st) {
    unsigned int version;
    unsigned char clusterUuid[16];
    FAB_NVML(nvmlReturn_t) status;
    unsigned int cliqueId;
    FAB_NVML(nvmlGpuFabricState_t) state;
    unsigned int healthMask;
    unsigned char healthSummary;
} FAB_NVML(nvmlGpuFabricInfo_v3_t);

typedef FAB_NVML(nvmlGpuFabricInfo_v3_t) FAB_NVML(nvmlGpuFabricInfoV_t);

#define FAB_NVML_GPU_FABRIC_INFO_V2 FAB_NVML_STRUCT_VERSION(sizeof(FAB_NVML(nvmlGpuFabricInfo_v2_t)), 2)
#define FAB_NVML_GPU_FABRIC_INFO_V3 FAB_NVML_STRUCT_VERSION(sizeof(FAB_NVML(nvmlGpuFabricInfo_v3_t)), 3)
#define FAB_NVML_MEMORY_V2 FAB_NVML_STRUCT_VERSION(sizeof(FAB_NVML(nvmlMemory_v2_t)), 2)

typedef struct FAB_NVML(nvmlPlatformInfo_v1_st) {
    unsigned int version;
    unsigned char ibGuid[16];
    unsigned char rackGuid[16];
    unsigned char chassisPhysicalSlotNumber;
    unsigned char computeSlotIndex;
    unsigned char nodeIndex;
    unsigned char peerType;
    unsigned char moduleId;
} FAB_NVML(nvmlPlatformInfo_v1_t);

typedef struct FAB_NVML(nvmlPlatformInfo_v2_st) {
    unsigned int version;
    unsigned char ibGuid[16];
    unsigned char chassisSerialNumber[16];
    unsigned char slotNumber;
    unsigned char trayIndex;
    unsigned char hostId;
    unsigned char peerType;
    unsigned char moduleId;
} FAB_NVML(nvmlPlatformInfo_v2_t);

typedef FAB_NVML(nvmlPlatformInfo_v2_t) FAB_NVML(nvmlPlatformInfo_t);

#define FAB_NVML_PLATFORM_INFO_V1 FAB_NVML_STRUCT_VERSION(sizeof(FAB_NVML(nvmlPlatformInfo_v1_t)), 1)
#define FAB_NVML_PLATFORM_INFO_V2 FAB_NVML_STRUCT_VERSION(sizeof(FAB_NVML(nvmlPlatformInfo_v2_t)), 2)

/* The PCI record with the device's class (nvmlDeviceGetPciInfoExt). */
typedef struct FAB_NVML(nvmlPciInfoExt_v1_st) {
    unsigned int version;
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    unsigned int baseClass;
    unsigned int subClass;
    char busId[32];
} FAB_NVML(nvmlPciInfoExt_v1_t);
typedef FAB_NVML(nvmlPciInfoExt_v1_t) FAB_NVML(nvmlPciInfoExt_t);
#define FAB_NVML_PCI_INFO_EXT_V1 FAB_NVML_STRUCT_VERSION(sizeof(FAB_NVML(nvmlPciInfoExt_v1_t)), 1)

/* Confidential computing: the system's state, and its settings record. */
typedef struct FAB_NVML(nvmlConfComputeSystemState_st) {
    unsigned int environment;
    unsigned int ccFeature;
    unsigned int devToolsMode;
} FAB_NVML(nvmlConfComputeSystemState_t);
typedef struct FAB_NVML(nvmlSystemConfComputeSettings_v1_st) {
    unsigned int version;
    unsigned int environment;
    unsigned int ccFeature;
    unsigned int devToolsMode;
    unsigned int multiGpuMode;
} FAB_NVML(nvmlSystemConfComputeSettings_v1_t);
typedef FAB_NVML(nvmlSystemConfComputeSettings_v1_t) FAB_NVML(nvmlSystemConfComputeSettings_t);
#define FAB_NVML_CONF_COMPUTE_SETTINGS_V1 \
    FAB_NVML_STRUCT_VERSION(sizeof(FAB_NVML(nvmlSystemConfComputeSettings_v1_t)), 1)

#define FAB_NVML_PCIE_CONSTANT_LIST(XX)                                \
    XX(NVML_PCIE_LINK_MAX_SPEED_INVALID, 0x0)                          \
    XX(NVML_PCIE_LINK_MAX_SPEED_2500MBPS, 0x1)                         \
    XX(NVML_PCIE_LINK_MAX_SPEED_5000MBPS, 0x2)                         \
    XX(NVML_PCIE_LINK_MAX_SPEED_8000MBPS, 0x3)                         \
    XX(NVML_PCIE_LINK_MAX_SPEED_16000MBPS, 0x4)                        \
    XX(NVML_PCIE_LINK_MAX_SPEED_32000MBPS, 0x5)                        \
    XX(NVML_PCIE_LINK_MAX_SPEED_64000MBPS, 0x6)                        \
    XX(NVML_CC_SYSTEM_ENVIRONMENT_UNAVAILABLE, 0)                      \
    XX(NVML_CC_SYSTEM_ENVIRONMENT_SIM, 1)                              \
    XX(NVML_CC_SYSTEM_ENVIRONMENT_PROD, 2)                             \
    XX(NVML_CC_SYSTEM_FEATURE_DISABLED, 0)                             \
    XX(NVML_CC_SYSTEM_FEATURE_ENABLED, 1)                              \
    XX(NVML_CC_SYSTEM_DEVTOOLS_MODE_OFF, 0)                            \
    XX(NVML_CC_SYSTEM_DEVTOOLS_MODE_ON, 1)                             \
    XX(NVML_CC_SYSTEM_MULTIGPU_NONE, 0)                                \
    XX(NVML_CC_SYSTEM_MULTIGPU_PROTECTED_PCIE, 1)
enum { FAB_NVML_PCIE_CONSTANT_LIST(FAB__NVML_CONSTANT_ENUMERATOR) };

/* What is at the far end of an NVLink (nvmlDeviceGetNvLinkRemoteDeviceType). */
#define FAB_NVML_NVLINK_DEVICE_TYPE_LIST(XX)  \
    XX(NVML_NVLINK_DEVICE_TYPE_GPU, 0x00)     \
    XX(NVML_NVLINK_DEVICE_TYPE_IBMNPU, 0x01)  \
    XX(NVML_NVLINK_DEVICE_TYPE_SWITCH, 0x02)  \
    XX(NVML_NVLINK_DEVICE_TYPE_UNKNOWN, 0xFF)
typedef enum FAB_NVML(nvmlIntNvLinkDeviceType_enum) {
    FAB_NVML_NVLINK_DEVICE_TYPE_LIST(FAB__NVML_ENUMERATOR)
} FAB_NVML(nvmlIntNvLinkDeviceType_t);

/* A process with a context on a device: the first ABI's record and the
 * current one (nvmlDeviceGetComputeRunningProcesses, _v2, _v3). */
typedef struct FAB_NVML(nvmlProcessInfo_v1_st) {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} FAB_NVML(nvmlProcessInfo_v1_t);
typedef struct FAB_NVML(nvmlProcessInfo_st) {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} FAB_NVML(nvmlProcessInfo_t);

#endif /* FAB_NVML_ABI_H */
