#include "pinned_allocator.h"

#include <gst/video/video.h>

#include <cstring>
#include <string>

#include "cuda_context_scope.h"
#include "engine_factory.h"

GST_DEBUG_CATEGORY_STATIC(pinned_debug);
#define GST_CAT_DEFAULT pinned_debug

namespace {

struct PinnedMemory {
  GstMemory mem;
  uint8_t* data;  // start of the allocation (the parent's for shared memory)
};

}  // namespace

typedef struct {
  GstAllocator parent;
  GstObject* cuda_context;  // GstCudaContext or null
} GstCudaStereoPinnedAllocator;

typedef struct {
  GstAllocatorClass parent_class;
} GstCudaStereoPinnedAllocatorClass;

GType gst_cuda_stereo_pinned_allocator_get_type(void);
G_DEFINE_TYPE(GstCudaStereoPinnedAllocator, gst_cuda_stereo_pinned_allocator, GST_TYPE_ALLOCATOR);

namespace {

gpointer pinned_map(GstMemory* mem, gsize, GstMapFlags) { return reinterpret_cast<PinnedMemory*>(mem)->data; }

void pinned_unmap(GstMemory*) {}

GstMemory* pinned_share(GstMemory* mem, gssize offset, gssize size) {
  GstMemory* parent = mem->parent ? mem->parent : mem;
  if (size == -1) size = static_cast<gssize>(mem->size) - offset;
  auto* sub = g_new0(PinnedMemory, 1);
  gst_memory_init(&sub->mem,
                  static_cast<GstMemoryFlags>(GST_MINI_OBJECT_FLAGS(parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY),
                  mem->allocator, parent, mem->maxsize, mem->align, mem->offset + offset, size);
  sub->data = reinterpret_cast<PinnedMemory*>(mem)->data;
  return &sub->mem;
}

GstMemory* pinned_alloc(GstAllocator* allocator, gsize size, GstAllocationParams* params) {
  auto* self = reinterpret_cast<GstCudaStereoPinnedAllocator*>(allocator);
  const gsize align = params->align | gst_memory_alignment;
  const gsize maxsize = size + params->prefix + params->padding;
  // cudaHostAlloc gives page-aligned memory; room for larger alignments.
  const gsize extra = align >= 4095 ? align : 0;
  std::string error;
  void* raw;
  {
    CudaContextScope scope(self->cuda_context);
    raw = cs_gst::alloc_pinned(maxsize + extra, &error);
  }
  if (!raw) {
    GST_WARNING_OBJECT(allocator, "no pinned memory of %" G_GSIZE_FORMAT " bytes: %s", maxsize, error.c_str());
    return nullptr;
  }
  auto* m = g_new0(PinnedMemory, 1);
  m->data = static_cast<uint8_t*>(raw);
  gsize lead = 0;
  if (extra) {
    const guintptr a = reinterpret_cast<guintptr>(raw);
    lead = ((a + align) & ~static_cast<guintptr>(align)) - a;
  }
  gst_memory_init(&m->mem, params->flags, allocator, nullptr, maxsize + extra, align, lead + params->prefix, size);
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    std::memset(m->data + lead, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    std::memset(m->data + lead + params->prefix + size, 0, params->padding);
  return &m->mem;
}

void pinned_free(GstAllocator* allocator, GstMemory* mem) {
  auto* m = reinterpret_cast<PinnedMemory*>(mem);
  if (!mem->parent) {
    CudaContextScope scope(reinterpret_cast<GstCudaStereoPinnedAllocator*>(allocator)->cuda_context);
    cs_gst::free_pinned(m->data);
  }
  g_free(m);
}

}  // namespace

static void gst_cuda_stereo_pinned_allocator_finalize(GObject* object) {
  auto* self = reinterpret_cast<GstCudaStereoPinnedAllocator*>(object);
  gst_clear_object(&self->cuda_context);
  G_OBJECT_CLASS(gst_cuda_stereo_pinned_allocator_parent_class)->finalize(object);
}

static void gst_cuda_stereo_pinned_allocator_class_init(GstCudaStereoPinnedAllocatorClass* klass) {
  GST_DEBUG_CATEGORY_INIT(pinned_debug, "cudastereopinned", 0, "Pinned host memory for cudastereo");
  G_OBJECT_CLASS(klass)->finalize = gst_cuda_stereo_pinned_allocator_finalize;
  GST_ALLOCATOR_CLASS(klass)->alloc = pinned_alloc;
  GST_ALLOCATOR_CLASS(klass)->free = pinned_free;
}

static void gst_cuda_stereo_pinned_allocator_init(GstCudaStereoPinnedAllocator* self) {
  GstAllocator* a = GST_ALLOCATOR(self);
  a->mem_type = GST_CUDA_STEREO_PINNED_MEMORY_TYPE;
  a->mem_map = pinned_map;
  a->mem_unmap = pinned_unmap;
  a->mem_share = pinned_share;
  // mem_copy and mem_is_span keep GstAllocator's fallbacks (copy into
  // system memory; never a span).
}

GstAllocator* gst_cuda_stereo_pinned_allocator_new(GstObject* cuda_context) {
  auto* self = static_cast<GstCudaStereoPinnedAllocator*>(
      g_object_new(gst_cuda_stereo_pinned_allocator_get_type(), nullptr));
  gst_object_ref_sink(self);
  if (cuda_context) self->cuda_context = GST_OBJECT(gst_object_ref(cuda_context));
  return GST_ALLOCATOR(self);
}

gboolean gst_cuda_stereo_is_pinned_memory(GstMemory* mem) {
  return mem && gst_memory_is_type(mem, GST_CUDA_STEREO_PINNED_MEMORY_TYPE);
}

GstBufferPool* gst_cuda_stereo_pinned_pool_new(GstAllocator* allocator, GstCaps* caps, guint min, guint max,
                                               guint* size) {
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps(&info, caps)) return nullptr;
  GstBufferPool* pool = gst_video_buffer_pool_new();
  GstStructure* config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), min, max);
  gst_buffer_pool_config_set_allocator(config, allocator, nullptr);
  if (!gst_buffer_pool_set_config(pool, config)) {
    gst_object_unref(pool);
    return nullptr;
  }
  config = gst_buffer_pool_get_config(pool);
  guint got = GST_VIDEO_INFO_SIZE(&info);
  gst_buffer_pool_config_get_params(config, nullptr, &got, nullptr, nullptr);
  gst_structure_free(config);
  if (size) *size = got;
  return pool;
}
