/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuda/cuvpinned.h"

#include <atomic>
#include <cstring>
#include <mutex>

#include <gmodule.h>
#include <gst/video/video.h>

#define GST_CAT_DEFAULT gst_cuda_vision_debug

#if CUV_HAVE_CUDA

#define CUV_PINNED_MEMORY_TYPE "CudaVisionPinned"

namespace {

struct PinnedMemory {
  GstMemory mem;
  guint8 *data;              /* the block's start; a shared memory points into its parent's */
  GstCudaContext *context;   /* the root's: a reference, the context the block is freed with */
};

struct CuvPinnedAllocator {
  GstAllocator parent;
  GstCudaContext *context;
};

struct CuvPinnedAllocatorClass {
  GstAllocatorClass parent_class;
};

GType cuv_pinned_allocator_get_type ();
G_DEFINE_TYPE (CuvPinnedAllocator, cuv_pinned_allocator, GST_TYPE_ALLOCATOR);

GstMemory *
pinned_alloc (GstAllocator *allocator, gsize size, GstAllocationParams *params)
{
  GstCudaContext *ctx = reinterpret_cast<CuvPinnedAllocator *> (allocator)->context;
  const gsize maxsize = size + params->prefix + params->padding;
  void *block = nullptr;
  {
    cuv::ContextGuard guard (ctx);
    /* page-aligned, which covers any alignment a pool asks for; portable: any context may DMA it */
    if (!guard.ok () || !CUV_CUDA_OK (allocator, cudaHostAlloc (&block, maxsize, cudaHostAllocPortable)))
      return nullptr;
  }
  auto *m = g_new0 (PinnedMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (m), params->flags, allocator, nullptr, maxsize, params->align, params->prefix, size);
  m->data = static_cast<guint8 *> (block);
  m->context = static_cast<GstCudaContext *> (gst_object_ref (ctx));
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    std::memset (m->data, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    std::memset (m->data + params->prefix + size, 0, params->padding);
  return GST_MEMORY_CAST (m);
}

void
pinned_free (GstAllocator *, GstMemory *mem)
{
  auto *m = reinterpret_cast<PinnedMemory *> (mem);
  if (!mem->parent) {
    /* cudaFreeHost waits for the whole device: off this thread, which may be a streaming one */
    cuv::free_host_later (m->context, m->data);
    gst_object_unref (m->context);
  }
  g_free (m);
}

gpointer
pinned_map (GstMemory *mem, gsize, GstMapFlags)
{
  return reinterpret_cast<PinnedMemory *> (mem)->data;
}

void
pinned_unmap (GstMemory *)
{
}

GstMemory *
pinned_share (GstMemory *mem, gssize offset, gssize size)
{
  auto *m = reinterpret_cast<PinnedMemory *> (mem);
  GstMemory *parent = mem->parent ? mem->parent : mem;
  if (size == -1)
    size = mem->size > static_cast<gsize> (offset) ? mem->size - offset : 0;
  auto *s = g_new0 (PinnedMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (s),
      static_cast<GstMemoryFlags> (GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY), mem->allocator,
      parent, mem->maxsize, mem->align, mem->offset + offset, size);
  s->data = m->data;
  return GST_MEMORY_CAST (s);
}

gboolean
pinned_is_span (GstMemory *a, GstMemory *b, gsize *offset)
{
  auto *ma = reinterpret_cast<PinnedMemory *> (a), *mb = reinterpret_cast<PinnedMemory *> (b);
  if (ma->data != mb->data || a->offset + a->size != b->offset)
    return FALSE;
  if (offset)
    *offset = a->offset - (a->parent ? a->parent->offset : 0);
  return TRUE;
}

void
cuv_pinned_allocator_finalize (GObject *object)
{
  gst_clear_object (&reinterpret_cast<CuvPinnedAllocator *> (object)->context);
  G_OBJECT_CLASS (cuv_pinned_allocator_parent_class)->finalize (object);
}

void
cuv_pinned_allocator_class_init (CuvPinnedAllocatorClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cuv_pinned_allocator_finalize;
  GST_ALLOCATOR_CLASS (klass)->alloc = pinned_alloc;
  GST_ALLOCATOR_CLASS (klass)->free = pinned_free;
}

void
cuv_pinned_allocator_init (CuvPinnedAllocator *self)
{
  GstAllocator *alloc = GST_ALLOCATOR_CAST (self);
  alloc->mem_type = CUV_PINNED_MEMORY_TYPE;
  alloc->mem_map = pinned_map;
  alloc->mem_unmap = pinned_unmap;
  alloc->mem_share = pinned_share;
  alloc->mem_is_span = pinned_is_span;
}

/* A video pool whose failed start frees the buffers it made before the failure: GStreamer's
 * default start (1.22 to 1.26) leaves them in its queue, and they leak, page-locked memory and
 * the context reference of each, when a cudaHostAlloc fails part way. */
struct CuvPinnedPool {
  GstVideoBufferPool parent;
};

struct CuvPinnedPoolClass {
  GstVideoBufferPoolClass parent_class;
};

GType cuv_pinned_pool_get_type ();
G_DEFINE_TYPE (CuvPinnedPool, cuv_pinned_pool, GST_TYPE_VIDEO_BUFFER_POOL);

gboolean
pinned_pool_start (GstBufferPool *pool)
{
  GstBufferPoolClass *parent = GST_BUFFER_POOL_CLASS (cuv_pinned_pool_parent_class);
  if (parent->start (pool))
    return TRUE;
  parent->stop (pool);
  return FALSE;
}

void
cuv_pinned_pool_class_init (CuvPinnedPoolClass *klass)
{
  GST_BUFFER_POOL_CLASS (klass)->start = pinned_pool_start;
}

void
cuv_pinned_pool_init (CuvPinnedPool *)
{
}

/* ---- page-locking memory that is not ours ---- */

/* all registrations of the process together, so that page-locking never starves the system */
constexpr gsize kMaxRegisteredBytes = gsize (4) << 30;
std::atomic<gsize> g_registered_bytes{0};
std::atomic<long> g_registered_blocks{0};

/* A memory's registration is read and changed under a lock chosen by its address: frames of
 * different sources (other pipelines) take different locks, and no lock is process-wide. */
std::mutex &
registration_lock (const void *root)
{
  static std::mutex locks[64];
  return locks[(reinterpret_cast<guintptr> (root) >> 6) % G_N_ELEMENTS (locks)];
}

/* Counts @bytes against kMaxRegisteredBytes; false (nothing counted) past it. */
bool
reserve_registered (gsize bytes)
{
  gsize now = g_registered_bytes.load ();
  do {
    if (now + bytes > kMaxRegisteredBytes)
      return false;
  } while (!g_registered_bytes.compare_exchange_weak (now, now + bytes));
  return true;
}

/* What we know of a root system memory, in its qdata: how often it came, and its registration. */
struct Registration {
  int sightings = 0;
  bool failed = false;
  /* page-locked by its owner (cudaHostAlloc'd, or registered by another library): one DMA as it is */
  bool locked_by_owner = false;
  GstCudaContext *context = nullptr; /* set once registered: unregistered with it current */
  void *block = nullptr;
  gsize bytes = 0;
};

GQuark
registration_quark ()
{
  static const GQuark q = g_quark_from_static_string ("cuv-page-locked");
  return q;
}

/* the memory is being freed (its qdata goes first): unregister while the block is still there */
void
forget_registration (gpointer data)
{
  auto *r = static_cast<Registration *> (data);
  if (r->context) {
    const bool pushed = gst_cuda_context_push (r->context);
    if (!pushed || cudaHostUnregister (r->block) != cudaSuccess)
      GST_WARNING ("could not unregister a page-locked block of %" G_GSIZE_FORMAT " bytes", r->bytes);
    if (pushed)
      gst_cuda_context_pop (nullptr);
    g_registered_bytes -= r->bytes;
    g_registered_blocks--;
    gst_object_unref (r->context);
  }
  delete r;
}

/* Whether the driver knows @root's memory as page-locked host memory already: its owner allocated
 * it with CUDA or registered it (a buffer wrapping cudaHostAlloc'd memory, another CUDA
 * library's). Our own copy of it through staging would only cost (cuvhostcopy.h), and
 * registering it again fails. */
bool
locked_by_owner (GstCudaContext *ctx, GstMemory *root)
{
  GstMapInfo map;
  if (!gst_memory_map (root, &map, GST_MAP_READ))
    return false;
  cudaPointerAttributes attr{};
  /* not a checked call: an unknown pointer is an answer, not a failure */
  const bool pushed = gst_cuda_context_push (ctx);
  const bool locked = pushed && cudaPointerGetAttributes (&attr, map.data) == cudaSuccess && attr.type == cudaMemoryTypeHost;
  if (pushed)
    gst_cuda_context_pop (nullptr);
  cudaGetLastError ();
  gst_memory_unmap (root, &map);
  return locked;
}

/* Page-locks @mem's block the second time it comes; whether it is page-locked. */
bool
lock_memory_pages (GstCudaContext *ctx, GstMemory *mem)
{
  if (cuv::is_pinned (mem))
    return true;
  GstMemory *root = mem;
  while (root->parent)
    root = root->parent;
  if (!gst_memory_is_type (root, GST_ALLOCATOR_SYSMEM))
    return false;
  std::lock_guard<std::mutex> lk (registration_lock (root));
  auto *r = static_cast<Registration *> (gst_mini_object_get_qdata (GST_MINI_OBJECT_CAST (root), registration_quark ()));
  if (!r) {
    r = new Registration;
    gst_mini_object_set_qdata (GST_MINI_OBJECT_CAST (root), registration_quark (), r, forget_registration);
    r->locked_by_owner = locked_by_owner (ctx, root);
  }
  if (r->context || r->locked_by_owner)
    return true;
  if (r->failed || ++r->sightings < 2)
    return false;
  /* the whole block, from before the root's offset to its end */
  GstMapInfo map;
  if (!gst_memory_map (root, &map, GST_MAP_READ)) {
    r->failed = true;
    return false;
  }
  void *block = map.data - root->offset;
  const gsize bytes = root->maxsize;
  gst_memory_unmap (root, &map);
  if (!reserve_registered (bytes)) {
    GST_INFO ("%" G_GSIZE_FORMAT " bytes page-locked already: a block of %" G_GSIZE_FORMAT " stays pageable",
        g_registered_bytes.load (), bytes);
    r->failed = true;
    return false;
  }
  /* not a checked call (no injected faults): a failure only leaves the memory pageable */
  const bool pushed = gst_cuda_context_push (ctx);
  const cudaError_t err = pushed ? cudaHostRegister (block, bytes, cudaHostRegisterPortable) : cudaErrorDeviceUninitialized;
  if (pushed)
    gst_cuda_context_pop (nullptr);
  if (err != cudaSuccess) {
    /* memory the driver cannot lock (a mapping of a file or a device): the pageable copy it is */
    GST_INFO ("a block of %" G_GSIZE_FORMAT " bytes stays pageable: %s", bytes, cudaGetErrorString (err));
    cudaGetLastError ();
    g_registered_bytes -= bytes;
    r->failed = true;
    return false;
  }
  r->context = static_cast<GstCudaContext *> (gst_object_ref (ctx));
  r->block = block;
  r->bytes = bytes;
  g_registered_blocks++;
  GST_DEBUG ("page-locked a block of %" G_GSIZE_FORMAT " bytes that came a second time", bytes);
  return true;
}

}  // namespace

bool
cuv::lock_pages (GstCudaContext *ctx, GstBuffer *buf)
{
  const guint n = gst_buffer_n_memory (buf);
  bool all = n > 0;
  for (guint i = 0; i < n; i++)
    all &= lock_memory_pages (ctx, gst_buffer_peek_memory (buf, i));
  return all;
}

/* The blocks of others' memory page-locked now (registered, not yet freed). For tests, as
 * cuv_host_waits. */
extern "C" G_MODULE_EXPORT long cuv_page_locked_blocks ()
{
  return g_registered_blocks;
}

GstBufferPool *
cuv::pinned_pool_new ()
{
  return static_cast<GstBufferPool *> (gst_object_ref_sink (g_object_new (cuv_pinned_pool_get_type (), nullptr)));
}

GstAllocator *
cuv::pinned_allocator (GstCudaContext *ctx)
{
  auto *self = static_cast<CuvPinnedAllocator *> (g_object_new (cuv_pinned_allocator_get_type (), nullptr));
  gst_object_ref_sink (self);
  self->context = static_cast<GstCudaContext *> (gst_object_ref (ctx));
  return GST_ALLOCATOR_CAST (self);
}

bool
cuv::is_pinned (GstMemory *mem)
{
  return mem && gst_memory_is_type (mem, CUV_PINNED_MEMORY_TYPE);
}

#endif
