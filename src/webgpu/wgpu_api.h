/* The subset of webgpu.h the WebGPU backend uses, declared here so that the
 * library builds with no WebGPU headers installed and loads the implementation
 * at run time (see wgpu_loader.c).
 *
 * The layouts follow the mid-2025 webgpu-headers ABI that the Dawn build in
 * the npm package bun-webgpu-linux-x64@0.1.7 exports (see
 * shared/facts/webgpu-dawn.md): WGPUStringView {ptr, len}, callback-info
 * structs passed by value, futures, 64-bit usage flags, Success = 1.
 * Structs that the implementation writes into (adapter info, limits) carry a
 * reserved tail, so a build with a few more trailing fields cannot write past
 * them.
 */
#ifndef RK_WGPU_API_H
#define RK_WGPU_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct WGPUInstanceImpl *WGPUInstance;
typedef struct WGPUAdapterImpl *WGPUAdapter;
typedef struct WGPUDeviceImpl *WGPUDevice;
typedef struct WGPUQueueImpl *WGPUQueue;
typedef struct WGPUBufferImpl *WGPUBuffer;
typedef struct WGPUShaderModuleImpl *WGPUShaderModule;
typedef struct WGPUComputePipelineImpl *WGPUComputePipeline;
typedef struct WGPUBindGroupLayoutImpl *WGPUBindGroupLayout;
typedef struct WGPUBindGroupImpl *WGPUBindGroup;
typedef struct WGPUPipelineLayoutImpl *WGPUPipelineLayout;
typedef struct WGPUCommandEncoderImpl *WGPUCommandEncoder;
typedef struct WGPUCommandBufferImpl *WGPUCommandBuffer;
typedef struct WGPUComputePassEncoderImpl *WGPUComputePassEncoder;

typedef uint32_t WGPUBool;
typedef uint32_t WGPUEnum; /* every enum is 32 bits */
typedef uint64_t WGPUFlags;

/* ---- enum values (this ABI: 0 is "undefined", Success is 1) ---------------- */
enum {
    WGPU_STATUS_SUCCESS = 1, /* WGPUStatus, every *Status enum */

    WGPU_STYPE_SHADER_SOURCE_WGSL = 0x2,

    WGPU_CALLBACK_MODE_WAIT_ANY_ONLY = 1,
    WGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS = 2,
    WGPU_CALLBACK_MODE_ALLOW_SPONTANEOUS = 3,

    WGPU_FEATURE_LEVEL_COMPATIBILITY = 1,
    WGPU_FEATURE_LEVEL_CORE = 2,

    WGPU_BACKEND_UNDEFINED = 0,
    WGPU_BACKEND_NULL = 1,
    WGPU_BACKEND_WEBGPU = 2,
    WGPU_BACKEND_D3D11 = 3,
    WGPU_BACKEND_D3D12 = 4,
    WGPU_BACKEND_METAL = 5,
    WGPU_BACKEND_VULKAN = 6,
    WGPU_BACKEND_OPENGL = 7,
    WGPU_BACKEND_OPENGLES = 8,

    WGPU_ADAPTER_DISCRETE_GPU = 1,
    WGPU_ADAPTER_INTEGRATED_GPU = 2,
    WGPU_ADAPTER_CPU = 3,

    WGPU_ERROR_FILTER_VALIDATION = 1,
    WGPU_ERROR_FILTER_OUT_OF_MEMORY = 2,
    WGPU_ERROR_FILTER_INTERNAL = 3,

    WGPU_ERROR_TYPE_NO_ERROR = 1,
    WGPU_ERROR_TYPE_VALIDATION = 2,
    WGPU_ERROR_TYPE_OUT_OF_MEMORY = 3,
    WGPU_ERROR_TYPE_INTERNAL = 4,

    WGPU_WAIT_SUCCESS = 1,
    WGPU_WAIT_TIMED_OUT = 2,
    WGPU_WAIT_ERROR = 3,

    WGPU_COMPILATION_MESSAGE_ERROR = 1,
    WGPU_COMPILATION_MESSAGE_WARNING = 2,
    WGPU_COMPILATION_MESSAGE_INFO = 3,
};

/* WGPUBufferUsage and WGPUMapMode: 64-bit flags. */
#define WGPU_BUFFER_USAGE_MAP_READ ((WGPUFlags)0x1)
#define WGPU_BUFFER_USAGE_MAP_WRITE ((WGPUFlags)0x2)
#define WGPU_BUFFER_USAGE_COPY_SRC ((WGPUFlags)0x4)
#define WGPU_BUFFER_USAGE_COPY_DST ((WGPUFlags)0x8)
#define WGPU_BUFFER_USAGE_UNIFORM ((WGPUFlags)0x40)
#define WGPU_BUFFER_USAGE_STORAGE ((WGPUFlags)0x80)
#define WGPU_MAP_MODE_READ ((WGPUFlags)0x1)

#define WGPU_STRLEN SIZE_MAX
#define WGPU_WHOLE_SIZE UINT64_MAX

/* ---- basic structs ------------------------------------------------------- */

/* len == WGPU_STRLEN: NUL-terminated. Callback messages are NOT terminated. */
typedef struct WGPUStringView {
    const char *data;
    size_t length;
} WGPUStringView;

typedef struct WGPUChainedStruct {
    const struct WGPUChainedStruct *next;
    WGPUEnum sType;
} WGPUChainedStruct;

typedef struct WGPUFuture {
    uint64_t id;
} WGPUFuture;

typedef struct WGPUFutureWaitInfo {
    WGPUFuture future;
    WGPUBool completed;
} WGPUFutureWaitInfo;

typedef struct WGPUInstanceCapabilities {
    WGPUChainedStruct *nextInChain;
    WGPUBool timedWaitAnyEnable;
    size_t timedWaitAnyMaxCount;
} WGPUInstanceCapabilities;

typedef struct WGPUInstanceDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUInstanceCapabilities capabilities;
} WGPUInstanceDescriptor;

typedef struct WGPURequestAdapterOptions {
    const WGPUChainedStruct *nextInChain;
    WGPUEnum featureLevel; /* first in this ABI */
    WGPUEnum powerPreference;
    WGPUBool forceFallbackAdapter;
    WGPUEnum backendType;
    void *compatibleSurface;
} WGPURequestAdapterOptions;

typedef struct WGPUAdapterInfo {
    void *nextInChain; /* WGPUChainedStructOut * */
    WGPUStringView vendor;
    WGPUStringView architecture;
    WGPUStringView device;
    WGPUStringView description;
    WGPUEnum backendType;
    WGPUEnum adapterType;
    uint32_t vendorID;
    uint32_t deviceID;
    uint32_t subgroupMinSize;
    uint32_t subgroupMaxSize;
    uint64_t reserved_[8]; /* room for fields a newer build may append */
} WGPUAdapterInfo;

/* Only the fields up to maxComputeWorkgroupsPerDimension are read; their
 * order has been stable across the 2025 headers. The tail is passed back to
 * the implementation unchanged (adapter limits → required limits). */
typedef struct WGPULimits {
    void *nextInChain;
    uint32_t maxTextureDimension1D;
    uint32_t maxTextureDimension2D;
    uint32_t maxTextureDimension3D;
    uint32_t maxTextureArrayLayers;
    uint32_t maxBindGroups;
    uint32_t maxBindGroupsPlusVertexBuffers;
    uint32_t maxBindingsPerBindGroup;
    uint32_t maxDynamicUniformBuffersPerPipelineLayout;
    uint32_t maxDynamicStorageBuffersPerPipelineLayout;
    uint32_t maxSampledTexturesPerShaderStage;
    uint32_t maxSamplersPerShaderStage;
    uint32_t maxStorageBuffersPerShaderStage;
    uint32_t maxStorageTexturesPerShaderStage;
    uint32_t maxUniformBuffersPerShaderStage;
    uint64_t maxUniformBufferBindingSize;
    uint64_t maxStorageBufferBindingSize;
    uint32_t minUniformBufferOffsetAlignment;
    uint32_t minStorageBufferOffsetAlignment;
    uint32_t maxVertexBuffers;
    uint64_t maxBufferSize;
    uint32_t maxVertexAttributes;
    uint32_t maxVertexBufferArrayStride;
    uint32_t maxInterStageShaderVariables;
    uint32_t maxColorAttachments;
    uint32_t maxColorAttachmentBytesPerSample;
    uint32_t maxComputeWorkgroupStorageSize;
    uint32_t maxComputeInvocationsPerWorkgroup;
    uint32_t maxComputeWorkgroupSizeX;
    uint32_t maxComputeWorkgroupSizeY;
    uint32_t maxComputeWorkgroupSizeZ;
    uint32_t maxComputeWorkgroupsPerDimension;
    uint32_t tail_[32]; /* later fields, passed through untouched */
} WGPULimits;

/* ---- callbacks (callback-info structs are passed by value) ------------------ */

typedef void (*WGPURequestAdapterCallback)(WGPUEnum status, WGPUAdapter adapter, WGPUStringView message,
                                           void *userdata1, void *userdata2);
typedef void (*WGPURequestDeviceCallback)(WGPUEnum status, WGPUDevice device, WGPUStringView message,
                                          void *userdata1, void *userdata2);
typedef void (*WGPUDeviceLostCallback)(const WGPUDevice *device, WGPUEnum reason, WGPUStringView message,
                                       void *userdata1, void *userdata2);
typedef void (*WGPUUncapturedErrorCallback)(const WGPUDevice *device, WGPUEnum type, WGPUStringView message,
                                            void *userdata1, void *userdata2);
typedef void (*WGPUBufferMapCallback)(WGPUEnum status, WGPUStringView message, void *userdata1, void *userdata2);
/* This build passes a message (an April-2025 header omits it). */
typedef void (*WGPUQueueWorkDoneCallback)(WGPUEnum status, WGPUStringView message, void *userdata1,
                                          void *userdata2);
typedef void (*WGPUPopErrorScopeCallback)(WGPUEnum status, WGPUEnum type, WGPUStringView message,
                                          void *userdata1, void *userdata2);
struct WGPUCompilationInfo;
typedef void (*WGPUCompilationInfoCallback)(WGPUEnum status, const struct WGPUCompilationInfo *info,
                                            void *userdata1, void *userdata2);

#define RK_WGPU_CALLBACK_INFO_(Name, Fn) \
    typedef struct Name {                \
        const WGPUChainedStruct *nextInChain; \
        WGPUEnum mode;                   \
        Fn callback;                     \
        void *userdata1;                 \
        void *userdata2;                 \
    } Name
RK_WGPU_CALLBACK_INFO_(WGPURequestAdapterCallbackInfo, WGPURequestAdapterCallback);
RK_WGPU_CALLBACK_INFO_(WGPURequestDeviceCallbackInfo, WGPURequestDeviceCallback);
RK_WGPU_CALLBACK_INFO_(WGPUDeviceLostCallbackInfo, WGPUDeviceLostCallback);
RK_WGPU_CALLBACK_INFO_(WGPUBufferMapCallbackInfo, WGPUBufferMapCallback);
RK_WGPU_CALLBACK_INFO_(WGPUQueueWorkDoneCallbackInfo, WGPUQueueWorkDoneCallback);
RK_WGPU_CALLBACK_INFO_(WGPUPopErrorScopeCallbackInfo, WGPUPopErrorScopeCallback);
RK_WGPU_CALLBACK_INFO_(WGPUCompilationInfoCallbackInfo, WGPUCompilationInfoCallback);
#undef RK_WGPU_CALLBACK_INFO_

typedef struct WGPUUncapturedErrorCallbackInfo {
    const WGPUChainedStruct *nextInChain;
    WGPUUncapturedErrorCallback callback;
    void *userdata1;
    void *userdata2;
} WGPUUncapturedErrorCallbackInfo;

/* ---- descriptors --------------------------------------------------------- */

typedef struct WGPUQueueDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUQueueDescriptor;

typedef struct WGPUDeviceDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    size_t requiredFeatureCount;
    const WGPUEnum *requiredFeatures;
    const WGPULimits *requiredLimits;
    WGPUQueueDescriptor defaultQueue;
    WGPUDeviceLostCallbackInfo deviceLostCallbackInfo;
    WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
} WGPUDeviceDescriptor;

typedef struct WGPUBufferDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUFlags usage;
    uint64_t size;
    WGPUBool mappedAtCreation;
} WGPUBufferDescriptor;

typedef struct WGPUShaderSourceWGSL {
    WGPUChainedStruct chain; /* embedded, sType WGPU_STYPE_SHADER_SOURCE_WGSL */
    WGPUStringView code;
} WGPUShaderSourceWGSL;

typedef struct WGPUShaderModuleDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUShaderModuleDescriptor;

typedef struct WGPUCompilationMessage {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView message;
    WGPUEnum type;
    uint64_t lineNum;
    uint64_t linePos;
    uint64_t offset;
    uint64_t length;
} WGPUCompilationMessage;

typedef struct WGPUCompilationInfo {
    const WGPUChainedStruct *nextInChain;
    size_t messageCount;
    const WGPUCompilationMessage *messages;
} WGPUCompilationInfo;

typedef struct WGPUConstantEntry {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView key;
    double value;
} WGPUConstantEntry;

typedef struct WGPUComputeState {
    const WGPUChainedStruct *nextInChain;
    WGPUShaderModule module;
    WGPUStringView entryPoint;
    size_t constantCount;
    const WGPUConstantEntry *constants;
} WGPUComputeState;

typedef struct WGPUComputePipelineDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUPipelineLayout layout; /* NULL = "auto" */
    WGPUComputeState compute;
} WGPUComputePipelineDescriptor;

typedef struct WGPUBindGroupEntry {
    const WGPUChainedStruct *nextInChain;
    uint32_t binding;
    WGPUBuffer buffer;
    uint64_t offset;
    uint64_t size;
    void *sampler;
    void *textureView;
} WGPUBindGroupEntry;

typedef struct WGPUBindGroupDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUBindGroupLayout layout;
    size_t entryCount;
    const WGPUBindGroupEntry *entries;
} WGPUBindGroupDescriptor;

typedef struct WGPUCommandEncoderDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUCommandEncoderDescriptor;

typedef struct WGPUComputePassDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    const void *timestampWrites;
} WGPUComputePassDescriptor;

/* ---- functions: one list, loaded by name ---------------------------------- */

#define RK_WGPU_FUNCTIONS(X)                                                                            \
    X(WGPUInstance, CreateInstance, (const WGPUInstanceDescriptor *))                                   \
    X(WGPUFuture, InstanceRequestAdapter,                                                               \
      (WGPUInstance, const WGPURequestAdapterOptions *, WGPURequestAdapterCallbackInfo))                \
    X(WGPUEnum, InstanceWaitAny, (WGPUInstance, size_t, WGPUFutureWaitInfo *, uint64_t))                \
    X(void, InstanceProcessEvents, (WGPUInstance))                                                      \
    X(void, InstanceRelease, (WGPUInstance))                                                            \
    X(WGPUEnum, AdapterGetInfo, (WGPUAdapter, WGPUAdapterInfo *))                                       \
    X(void, AdapterInfoFreeMembers, (WGPUAdapterInfo))                                                  \
    X(WGPUEnum, AdapterGetLimits, (WGPUAdapter, WGPULimits *))                                          \
    X(WGPUFuture, AdapterRequestDevice,                                                                 \
      (WGPUAdapter, const WGPUDeviceDescriptor *, WGPURequestDeviceCallbackInfo))                       \
    X(void, AdapterRelease, (WGPUAdapter))                                                              \
    X(WGPUEnum, DeviceGetLimits, (WGPUDevice, WGPULimits *))                                            \
    X(WGPUQueue, DeviceGetQueue, (WGPUDevice))                                                          \
    X(WGPUBuffer, DeviceCreateBuffer, (WGPUDevice, const WGPUBufferDescriptor *))                       \
    X(WGPUShaderModule, DeviceCreateShaderModule, (WGPUDevice, const WGPUShaderModuleDescriptor *))     \
    X(WGPUComputePipeline, DeviceCreateComputePipeline,                                                 \
      (WGPUDevice, const WGPUComputePipelineDescriptor *))                                              \
    X(WGPUBindGroup, DeviceCreateBindGroup, (WGPUDevice, const WGPUBindGroupDescriptor *))              \
    X(WGPUCommandEncoder, DeviceCreateCommandEncoder, (WGPUDevice, const WGPUCommandEncoderDescriptor *)) \
    X(void, DevicePushErrorScope, (WGPUDevice, WGPUEnum))                                               \
    X(WGPUFuture, DevicePopErrorScope, (WGPUDevice, WGPUPopErrorScopeCallbackInfo))                     \
    X(void, DeviceDestroy, (WGPUDevice))                                                                \
    X(void, DeviceRelease, (WGPUDevice))                                                                \
    X(void, QueueWriteBuffer, (WGPUQueue, WGPUBuffer, uint64_t, const void *, size_t))                  \
    X(void, QueueSubmit, (WGPUQueue, size_t, const WGPUCommandBuffer *))                                \
    X(WGPUFuture, QueueOnSubmittedWorkDone, (WGPUQueue, WGPUQueueWorkDoneCallbackInfo))                 \
    X(void, QueueRelease, (WGPUQueue))                                                                  \
    X(WGPUFuture, BufferMapAsync, (WGPUBuffer, WGPUFlags, size_t, size_t, WGPUBufferMapCallbackInfo))   \
    X(const void *, BufferGetConstMappedRange, (WGPUBuffer, size_t, size_t))                            \
    X(void, BufferUnmap, (WGPUBuffer))                                                                  \
    X(void, BufferDestroy, (WGPUBuffer))                                                                \
    X(void, BufferRelease, (WGPUBuffer))                                                                \
    X(WGPUFuture, ShaderModuleGetCompilationInfo, (WGPUShaderModule, WGPUCompilationInfoCallbackInfo))  \
    X(void, ShaderModuleRelease, (WGPUShaderModule))                                                    \
    X(WGPUBindGroupLayout, ComputePipelineGetBindGroupLayout, (WGPUComputePipeline, uint32_t))          \
    X(void, ComputePipelineRelease, (WGPUComputePipeline))                                              \
    X(void, BindGroupLayoutRelease, (WGPUBindGroupLayout))                                              \
    X(void, BindGroupRelease, (WGPUBindGroup))                                                          \
    X(void, CommandEncoderCopyBufferToBuffer,                                                           \
      (WGPUCommandEncoder, WGPUBuffer, uint64_t, WGPUBuffer, uint64_t, uint64_t))                       \
    X(void, CommandEncoderClearBuffer, (WGPUCommandEncoder, WGPUBuffer, uint64_t, uint64_t))            \
    X(WGPUComputePassEncoder, CommandEncoderBeginComputePass,                                           \
      (WGPUCommandEncoder, const WGPUComputePassDescriptor *))                                          \
    X(WGPUCommandBuffer, CommandEncoderFinish, (WGPUCommandEncoder, const void *))                      \
    X(void, CommandEncoderRelease, (WGPUCommandEncoder))                                                \
    X(void, CommandBufferRelease, (WGPUCommandBuffer))                                                  \
    X(void, ComputePassEncoderSetPipeline, (WGPUComputePassEncoder, WGPUComputePipeline))               \
    X(void, ComputePassEncoderSetBindGroup,                                                             \
      (WGPUComputePassEncoder, uint32_t, WGPUBindGroup, size_t, const uint32_t *))                      \
    X(void, ComputePassEncoderDispatchWorkgroups, (WGPUComputePassEncoder, uint32_t, uint32_t, uint32_t)) \
    X(void, ComputePassEncoderEnd, (WGPUComputePassEncoder))                                            \
    X(void, ComputePassEncoderRelease, (WGPUComputePassEncoder))

/* The loaded entry points: W->CreateInstance(...) calls wgpuCreateInstance. */
typedef struct rk__wgpu_api {
#define RK_WGPU_MEMBER_(ret, name, params) ret(*name) params;
    RK_WGPU_FUNCTIONS(RK_WGPU_MEMBER_)
#undef RK_WGPU_MEMBER_
} rk__wgpu_api;

/* A NUL-terminated string as a WGPUStringView. */
static inline WGPUStringView rk__wgpu_str(const char *s) {
    WGPUStringView v = {s, s ? WGPU_STRLEN : 0};
    return v;
}

#endif
