/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cudavision._native: the CUDA route's work a frame, in C++ (docs/python.md, "Frames in CUDA
 * memory"): a buffer's CUDA memory mapped for the device, its writer's end ordered before a
 * consumer's stream, and each plane's DLPack capsule. The same steps in Python and ctypes cost
 * some 25 us a frame (docs/performance-log.md, "The module's own cost in C++"), most of it
 * Python's calls rather than the driver's.
 *
 * Built against Python's stable ABI (3.9 on), so that one build loads in every Python 3 that the
 * system has (the GPU machine's 3.12 included). It links libgstreamer only: the CUDA driver's
 * functions and libgstcuda's memory stream (1.24+) are the module's, bound by address (bind ()),
 * so that the tests can stand in for the driver on a machine without one.
 */
#define Py_LIMITED_API 0x03090000
#include <Python.h>
#include <structmember.h>

#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>
#include <pthread.h>

namespace {

/* ---- the driver, bound by address ------------------------------------------------------- */

using CUresult = int;
using CUcontext = void *;
using CUstream = void *;
using CUevent = void *;

constexpr CUresult kNotReady = 600;  /* CUDA_ERROR_NOT_READY: work still pending on the stream */
constexpr int kAttributeContext = 1, kAttributeDeviceOrdinal = 9;
constexpr unsigned kEventDisableTiming = 2;
constexpr uintptr_t kStreamLegacy = 1, kStreamPerThread = 2;  /* the default streams, as DLPack names them */
/* GST_CUDA_MEMORY_TRANSFER_NEED_SYNC (gst/cuda/gstcudamemory.h, 1.24+): the writer's work may be pending */
constexpr guint kNeedSync = GST_MEMORY_FLAG_LAST << 2;
constexpr GstMapFlags kMapCuda = (GstMapFlags) (GST_MAP_FLAG_LAST << 1);  /* GST_MAP_CUDA */

struct Driver {
  CUresult (*pointer_get_attributes) (unsigned, int *, void **, unsigned long long);
  CUresult (*primary_ctx_retain) (CUcontext *, int);
  CUresult (*ctx_push) (CUcontext);
  CUresult (*ctx_pop) (CUcontext *);
  CUresult (*ctx_get_current) (CUcontext *);
  CUresult (*event_create) (CUevent *, unsigned);
  CUresult (*event_record) (CUevent, CUstream);
  CUresult (*event_synchronize) (CUevent);
  CUresult (*event_destroy) (CUevent);
  CUresult (*stream_wait_event) (CUstream, CUevent, unsigned);
  CUresult (*stream_query) (CUstream);
  void *(*memory_get_stream) (GstMemory *);  /* libgstcuda 1.24+, else null */
  CUstream (*stream_get_handle) (void *);
};

/* the names bind () takes, in Driver's order */
const char *const kDriverNames[] = {
  "cuPointerGetAttributes", "cuDevicePrimaryCtxRetain", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2",
  "cuCtxGetCurrent", "cuEventCreate", "cuEventRecord", "cuEventSynchronize", "cuEventDestroy_v2",
  "cuStreamWaitEvent", "cuStreamQuery", "gst_cuda_memory_get_stream", "gst_cuda_stream_get_handle",
};
constexpr int kDriverSize = sizeof (kDriverNames) / sizeof (kDriverNames[0]);
static_assert (sizeof (Driver) == kDriverSize * sizeof (void *), "one name a function");

Driver driver;
bool bound;
/* the primary context of each device, retained once for the process as the CUDA runtime holds it */
constexpr int kDevices = 64;
CUcontext primary[kDevices];

PyObject *map_error;  /* the module's MapError, a ValueError (bind ()) */
/* the interpreter is ending (at_exit (), from atexit): what GStreamer's mappings and references
 * hold is left to the process's end, so that no wrapper freed then drops the last one of mapped
 * memory (Py_IsFinalizing is not in the stable ABI before 3.13) */
bool finalizing;
PyObject *unbound_why;  /* why no driver is bound (bind (None, error, why)) */

bool
check (CUresult result, const char *what)
{
  if (result == 0)
    return true;
  PyErr_Format (map_error, "%s failed (CUresult %d)", what, result);
  return false;
}

CUcontext
primary_context (int device)
{
  if (device < 0 || device >= kDevices) {
    PyErr_Format (map_error, "CUDA device %d is beyond the %d this module keeps", device, kDevices);
    return nullptr;
  }
  if (!primary[device] && !check (driver.primary_ctx_retain (&primary[device], device),
          "taking the device's primary context"))
    return nullptr;
  return primary[device];
}

/* ---- the mapping ------------------------------------------------------------------------ */

/* the consumers' streams already ordered after the writer: a default stream by thread and context */
struct Ordered {
  uintptr_t stream, thread;
  CUcontext context;
};
constexpr int kOrdered = 8;

struct Mapping {
  PyObject_HEAD
  PyObject *weakrefs;
  GstMemory *memory;
  GstMapInfo info;
  bool mapped;
  int writable;
  unsigned long long address, size;
  CUcontext context;
  int device;
  uintptr_t writer;  /* the writer's stream while its work may be pending, else 0 */
  CUevent event;  /* the writer's end, recorded once a mapping */
  GObject *gst_context;  /* the memory's GstCudaContext (GST_MAP_CUDA mappings), alive while the memory is */
  struct EventPool *pool;  /* where the event came from and goes back to, or null: destroyed with the mapping */
  Ordered ordered[kOrdered];
  int n_ordered;
};

/* ---- events, pooled by GStreamer context --------------------------------------------------- */

/* A GstCudaContext's events that no mapping holds, for the next frames' writers: an event made,
 * recorded and destroyed a frame costs two driver calls more, and making one needs the context
 * current (two more). An event belongs to its CUDA context and dies with it, so the pool is tied
 * to the GstCudaContext: a weak reference empties it at the context's dispose, before its
 * finalize destroys the CUDA context. A mapping holds the memory, which holds the context, so
 * while a mapping takes or gives back an event its context is alive. */
struct EventPool {
  std::mutex lock;
  std::vector<CUevent> free;
  bool alive = true;
  std::atomic<int> refs { 1 };  /* the context's, and one a mapping holding an event of it */
};
constexpr size_t kPoolMost = 16;  /* events kept a context; more go back to the driver */
bool record_needs_context;  /* the driver refused a record without the event's context current */
/* what counters () tells: events made, and writers' ends recorded with a pooled event */
unsigned long long events_made, pooled_records;
GQuark pool_quark;

void
pool_unref (EventPool *pool)
{
  if (--pool->refs == 0)
    delete pool;
}

/* the GstCudaContext's dispose: its events go back to the driver while the CUDA context lives */
void
pool_context_gone (gpointer data, GObject *)
{
  auto *pool = (EventPool *) data;
  {
    std::lock_guard<std::mutex> hold (pool->lock);
    pool->alive = false;
    for (CUevent e : pool->free)
      driver.event_destroy (e);
    pool->free.clear ();
  }
  pool_unref (pool);
}

EventPool *
pool_of (GObject *context)
{
  auto *pool = (EventPool *) g_object_get_qdata (context, pool_quark);
  if (!pool) {
    pool = new EventPool;
    g_object_set_qdata (context, pool_quark, pool);
    g_object_weak_ref (context, pool_context_gone, pool);
  }
  return pool;
}

CUevent
pool_take (EventPool *pool)
{
  std::lock_guard<std::mutex> hold (pool->lock);
  if (pool->free.empty ())
    return nullptr;
  CUevent e = pool->free.back ();
  pool->free.pop_back ();
  return e;
}

/* @event back to @pool (the context alive: a mapping of it holds its memory), or to the driver
 * where the pool is full */
void
pool_give (EventPool *pool, CUevent event)
{
  bool kept = false;
  {
    std::lock_guard<std::mutex> hold (pool->lock);
    if (pool->alive && pool->free.size () < kPoolMost) {
      pool->free.push_back (event);
      kept = true;
    }
  }
  if (!kept)
    driver.event_destroy (event);
}

/* the mapping's event back to its pool, or to the driver */
void
release_event (Mapping *self)
{
  if (!self->event)
    return;
  if (self->pool) {
    pool_give (self->pool, self->event);
    pool_unref (self->pool);
    self->pool = nullptr;
  } else {
    driver.event_destroy (self->event);
  }
  self->event = nullptr;
}

/* The memory's GstCudaContext: gst/cuda/gstcudamemory.h's GstCudaMemory begins with its GstMemory
 * and the context (public fields), read here so that the C++ part needs no CUDA header. */
struct CudaMemoryHead {
  GstMemory mem;
  GObject *context;
};

PyObject *
memory_type_of (GstMemory *memory)
{
  const char *type = memory->allocator ? memory->allocator->mem_type : nullptr;
  return PyUnicode_FromString (type ? type : "unknown");
}

/* CudaMapping (buffer, writable, cuda, mem_type): the one CUDA memory of the buffer at @buffer (its
 * address) mapped for the device (GST_MAP_CUDA, or plainly where @cuda is false: the tests' system
 * memory), read or also written, and referenced: the mapping is the memory's, whatever buffers
 * share it (the module keys it by the memory's address); @mem_type the allocator's memory type */
int
mapping_init (PyObject *self_, PyObject *args, PyObject *)
{
  auto *self = (Mapping *) self_;
  unsigned long long address;
  int writable, cuda;
  const char *mem_type;
  if (!PyArg_ParseTuple (args, "Kpps", &address, &writable, &cuda, &mem_type))
    return -1;
  if (self->mapped) {
    PyErr_SetString (PyExc_RuntimeError, "a mapping is made once");
    return -1;
  }
  if (!map_error) {
    PyErr_SetString (PyExc_RuntimeError, "cudavision._native.bind () first");
    return -1;
  }
  auto *buffer = (GstBuffer *) (uintptr_t) address;
  guint n_memory = gst_buffer_n_memory (buffer);
  if (n_memory != 1) {
    PyErr_Format (map_error, "the buffer holds %u memories: a CUDA frame is viewed in one", n_memory);
    return -1;
  }
  GstMemory *memory = gst_buffer_peek_memory (buffer, 0);  /* the buffer's, alive while it is */
  if (!memory->allocator || !memory->allocator->mem_type || strcmp (memory->allocator->mem_type, mem_type) != 0) {
    PyObject *type = memory_type_of (memory);
    PyErr_Format (map_error, "the caps say CUDA memory but the buffer's memory is %U", type);
    Py_XDECREF (type);
    return -1;
  }
  if (!bound) {  /* no driver: what bind () was told of it */
    PyErr_SetObject (map_error, unbound_why);
    return -1;
  }
  int flags = GST_MAP_READ | (cuda ? kMapCuda : 0) | (writable ? GST_MAP_WRITE : 0);
  gboolean mapped;
  Py_BEGIN_ALLOW_THREADS  /* a map may wait for the memory's stream */
  mapped = gst_memory_map (memory, &self->info, (GstMapFlags) flags);
  Py_END_ALLOW_THREADS
  if (!mapped) {
    PyErr_SetString (map_error, "the CUDA memory could not be mapped");
    return -1;
  }
  /* a reference of the mapping's own, dropped with the map, so that the memory's address (the
   * key of the module's mappings) stays its own */
  self->mapped = true;
  self->memory = (GstMemory *) gst_mini_object_ref (GST_MINI_OBJECT_CAST (memory));
  self->writable = writable;
  self->address = (uintptr_t) self->info.data;
  self->size = self->info.size;
  if (cuda && G_IS_OBJECT (((CudaMemoryHead *) memory)->context))
    self->gst_context = ((CudaMemoryHead *) memory)->context;
  int attributes[2] = { kAttributeContext, kAttributeDeviceOrdinal };
  void *data[2] = { &self->context, &self->device };
  if (!check (driver.pointer_get_attributes (2, attributes, data, self->address),
          "asking the CUDA driver for the frame's context and device"))
    return -1;
  /* 1.24+: the stream the frame was written on, while its work may still be pending there */
  if (driver.memory_get_stream && (GST_MINI_OBJECT_FLAGS (memory) & kNeedSync)) {
    void *stream = driver.memory_get_stream (memory);
    uintptr_t handle = stream ? (uintptr_t) driver.stream_get_handle (stream) : 0;
    self->writer = handle ? handle : kStreamLegacy;
  }
  return 0;
}

void
mapping_dealloc (PyObject *self_)
{
  auto *self = (Mapping *) self_;
  if (self->weakrefs)
    PyObject_ClearWeakRefs (self_);
  if (self->mapped && !finalizing) {
    /* without the GIL, as ctypes calls: freeing the memory waits for the stream it was written on
     * (libgstcuda 1.24+), whose work may wait for a Python thread */
    Py_BEGIN_ALLOW_THREADS
    release_event (self);
    gst_memory_unmap (self->memory, &self->info);
    gst_mini_object_unref (GST_MINI_OBJECT_CAST (self->memory));
    Py_END_ALLOW_THREADS
  }
  auto *type = Py_TYPE (self_);
  auto free_ = (freefunc) PyType_GetSlot (type, Py_tp_free);
  free_ (self_);
  Py_DECREF (type);
}

/* The writer's end as an event on its stream, in the frame's context: recorded once a mapping,
 * the writer's work being queued before the frame reached the application. No event where that
 * stream is idle by now: the writer is done and nothing is left to wait for (most frames of a
 * pipeline that keeps up, which so cost one query). False with an exception set on failure. */
bool
writer_event (Mapping *self, CUevent *out)
{
  *out = self->event;
  if (self->event || !self->writer)
    return true;
  /* a stream of its own names its context, so it is asked as it is; a default stream only in
   * the frame's context (and a driver that refuses the first way is asked the second) */
  bool named = self->writer != kStreamLegacy && self->writer != kStreamPerThread;
  CUresult state = named ? driver.stream_query ((CUstream) self->writer) : -1;
  if (state == 0) {
    self->writer = 0;
    return true;
  }
  /* on a stream of its own, the event comes from the context's pool and goes back there after
   * the frame, and is recorded without the frame's context current where the driver allows it */
  EventPool *pool = named && self->gst_context ? pool_of (self->gst_context) : nullptr;
  CUevent event = pool ? pool_take (pool) : nullptr;
  if (event && state == kNotReady && !record_needs_context) {
    if (driver.event_record (event, (CUstream) self->writer) == 0) {
      pooled_records++;
      pool->refs++;
      self->pool = pool;
      self->event = *out = event;
      return true;
    }
    record_needs_context = true;
  }
  if (!check (driver.ctx_push (self->context), "making the frame's CUDA context current")) {
    if (event)
      pool_give (pool, event);
    return false;
  }
  bool ok = true;
  if (state != kNotReady && driver.stream_query ((CUstream) self->writer) == 0) {
    self->writer = 0;
    if (event)
      pool_give (pool, event);
  } else {
    if (event)
      pooled_records++;
    else if ((ok = check (driver.event_create (&event, kEventDisableTiming), "creating a CUDA event")))
      events_made++;
    if (ok) {
      CUresult result = driver.event_record (event, (CUstream) self->writer);
      if (result != 0) {
        driver.event_destroy (event);
        ok = check (result, "recording the frame's end on its stream");
      } else {
        self->event = *out = event;
        if (pool) {
          pool->refs++;
          self->pool = pool;
        }
      }
    }
  }
  CUcontext popped;
  driver.ctx_pop (&popped);
  return ok;
}

/* Work queued on @stream (a CUstream handle, or 1 and 2: the legacy and per-thread default
 * streams of the calling thread's context) after this runs reads the whole frame: the stream
 * waits on the GPU for the frame's writer. Without a writer still pending, nothing. */
bool
order_after_writer (Mapping *self, uintptr_t stream)
{
  if (!self->writer || stream == self->writer)
    return true;
  CUevent event;
  if (!writer_event (self, &event))
    return false;
  if (!event)
    return true;
  Ordered key = { stream, 0, nullptr };
  bool push = false;
  if (stream == kStreamLegacy || stream == kStreamPerThread) {
    /* a default stream names no stream of its own: it is the calling thread's, in the context
     * current there, or with none current the device's primary context's, which the CUDA
     * runtime (PyTorch, CuPy) uses */
    CUcontext current = nullptr;
    driver.ctx_get_current (&current);
    push = current == nullptr;
    if (push && !(current = primary_context (self->device)))
      return false;
    key.thread = (uintptr_t) pthread_self ();
    key.context = current;
  }
  for (int i = 0; i < self->n_ordered; i++) {
    const Ordered &o = self->ordered[i];
    if (o.stream == key.stream && o.thread == key.thread && o.context == key.context)
      return true;
  }
  if (push && !check (driver.ctx_push (key.context), "making the primary context current"))
    return false;
  bool ok = check (driver.stream_wait_event ((CUstream) stream, event, 0),
      "ordering the consumer's stream after the frame");
  if (push) {
    CUcontext popped;
    driver.ctx_pop (&popped);
  }
  /* past the last slot a stream is ordered again at each capsule: a wait more, never one less */
  if (ok && self->n_ordered < kOrdered)
    self->ordered[self->n_ordered++] = key;
  return ok;
}

/* The frame's writer is done: the host waits for it (the CUDA array interface, whose stream a
 * consumer reads in its own context, gets no stream of another context). */
PyObject *
mapping_finish_on_host (PyObject *self_, PyObject *)
{
  auto *self = (Mapping *) self_;
  CUevent event;
  if (!writer_event (self, &event))
    return nullptr;
  CUresult result = 0;
  if (event) {
    Py_BEGIN_ALLOW_THREADS  /* the writer may wait for a Python thread */
    result = driver.event_synchronize (event);
    Py_END_ALLOW_THREADS
  }
  if (!check (result, "waiting for the frame's writer"))
    return nullptr;
  self->writer = 0;
  Py_RETURN_NONE;
}

/* ---- a frame's buffer, held ---------------------------------------------------------------- */

/* BufferRef (buffer): a reference to the buffer at @buffer, dropped with this object. A frame's
 * views and tensors hold it, so that the buffer goes back to its pool only once nothing reads its
 * memory (a pool reuses a buffer whose memory is not shared, however many references the memory
 * itself has: a mapping's alone would not keep upstream from writing into it). */
struct BufferRef {
  PyObject_HEAD
  GstBuffer *buffer;
};

int
buffer_ref_init (PyObject *self, PyObject *args, PyObject *)
{
  unsigned long long address;
  if (!PyArg_ParseTuple (args, "K", &address))
    return -1;
  if (((BufferRef *) self)->buffer || !address) {
    PyErr_SetString (PyExc_ValueError, "a BufferRef holds one buffer");
    return -1;
  }
  ((BufferRef *) self)->buffer = gst_buffer_ref ((GstBuffer *) (uintptr_t) address);
  return 0;
}

void
buffer_ref_dealloc (PyObject *self)
{
  GstBuffer *buffer = ((BufferRef *) self)->buffer;
  if (buffer && !finalizing) {
    Py_BEGIN_ALLOW_THREADS  /* the last reference frees the buffer's memory, which may wait (above) */
    gst_buffer_unref (buffer);
    Py_END_ALLOW_THREADS
  }
  auto *type = Py_TYPE (self);
  ((freefunc) PyType_GetSlot (type, Py_tp_free)) (self);
  Py_DECREF (type);
}

PyType_Slot buffer_ref_slots[] = {
  { Py_tp_doc, (void *) "BufferRef (buffer): a reference to the buffer at @buffer, dropped with this object" },
  { Py_tp_init, (void *) buffer_ref_init },
  { Py_tp_new, (void *) PyType_GenericNew },
  { Py_tp_dealloc, (void *) buffer_ref_dealloc },
  { 0, nullptr },
};

PyType_Spec buffer_ref_spec = {
  "cudavision._native.BufferRef", sizeof (BufferRef), 0, Py_TPFLAGS_DEFAULT, buffer_ref_slots,
};

/* ---- DLPack (dlpack.h v1.0, and the unversioned tensor of older consumers) --------------- */

struct DLDevice {
  int32_t device_type, device_id;
};
struct DLDataType {
  uint8_t code, bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape, *strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter) (DLManagedTensor *);
};
struct DLPackVersion {
  uint32_t major, minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter) (DLManagedTensorVersioned *);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr int32_t kDLCUDA = 2;
constexpr uint8_t kDLUInt = 1;
constexpr uint64_t kDLPackFlagReadOnly = 1;
const char kName[] = "dltensor", kNameVersioned[] = "dltensor_versioned";

/* A plane's layout, packed by the module once a geometry (_dlpack.layout): the dimensions, the
 * element's bits, then the shape and the strides in elements. */
struct Layout {
  int32_t ndim;
  uint32_t bits;
  int64_t shape[3], strides[3];
};

/* the managed tensor and the shape and strides it points at, in one allocation */
template <typename Managed> struct Export {
  Managed managed;
  int64_t shape[3], strides[3];
};

Py_ssize_t exported;  /* tensors handed out and not yet deleted */

template <typename Managed>
void
delete_export (Managed *managed)
{
  /* a consumer may free its tensor on a thread of its own, or after the interpreter's end */
  if (!Py_IsInitialized () || finalizing)
    return;
  PyGILState_STATE gil = PyGILState_Ensure ();
  Py_XDECREF ((PyObject *) managed->manager_ctx);
  exported--;
  PyGILState_Release (gil);
  free (managed);
}

/* a capsule's destructor: one the consumer never took (still named as made) deletes its tensor */
void
destroy_capsule (PyObject *capsule)
{
  if (PyCapsule_IsValid (capsule, kNameVersioned))
    delete_export ((DLManagedTensorVersioned *) PyCapsule_GetPointer (capsule, kNameVersioned));
  else if (PyCapsule_IsValid (capsule, kName))
    delete_export ((DLManagedTensor *) PyCapsule_GetPointer (capsule, kName));
}

template <typename Managed>
PyObject *
make_capsule (Mapping *self, PyObject *plane, unsigned long long offset, const Layout &layout, bool read_only)
{
  auto *e = (Export<Managed> *) calloc (1, sizeof (Export<Managed>));
  if (!e)
    return PyErr_NoMemory ();
  DLTensor &t = e->managed.dl_tensor;
  t.data = (void *) (uintptr_t) self->address;
  t.byte_offset = offset;
  t.device = { kDLCUDA, self->device };
  t.ndim = layout.ndim;
  t.dtype = { kDLUInt, (uint8_t) layout.bits, 1 };
  memcpy (e->shape, layout.shape, sizeof (e->shape));
  memcpy (e->strides, layout.strides, sizeof (e->strides));
  t.shape = e->shape;
  t.strides = e->strides;
  Py_INCREF (plane);
  e->managed.manager_ctx = plane;  /* the plane keeps the mapping, and so the frame, alive */
  e->managed.deleter = delete_export<Managed>;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    e->managed.version = { 1, 0 };
    e->managed.flags = read_only ? kDLPackFlagReadOnly : 0;
  }
  exported++;
  PyObject *capsule = PyCapsule_New (&e->managed,
      std::is_same_v<Managed, DLManagedTensorVersioned> ? kNameVersioned : kName, destroy_capsule);
  if (!capsule)
    delete_export (&e->managed);
  return capsule;
}

/* export (plane, offset, layout, stream, versioned): the DLPack capsule of @plane (the object the
 * tensor keeps alive) at @offset in the mapping, as @layout says, @stream (-1: none) first
 * ordered after the frame's writer; a versioned capsule (dlpack 1.0) is read-only unless the
 * mapping is writable. */
PyObject *
mapping_export (PyObject *self_, PyObject *args)
{
  auto *self = (Mapping *) self_;
  PyObject *plane, *layout_bytes;
  unsigned long long offset;
  long long stream;
  int versioned;
  if (!PyArg_ParseTuple (args, "OKSLp", &plane, &offset, &layout_bytes, &stream, &versioned))
    return nullptr;
  char *raw;
  Py_ssize_t size;
  if (PyBytes_AsStringAndSize (layout_bytes, &raw, &size) < 0)
    return nullptr;
  Layout layout;
  if (size != sizeof (layout)) {
    PyErr_SetString (PyExc_ValueError, "a layout is packed by _dlpack.layout ()");
    return nullptr;
  }
  memcpy (&layout, raw, sizeof (layout));
  if (layout.ndim < 1 || layout.ndim > 3) {
    PyErr_SetString (PyExc_ValueError, "a plane has 1 to 3 dimensions");
    return nullptr;
  }
  if (stream != -1 && !order_after_writer (self, (uintptr_t) stream))
    return nullptr;
  if (versioned)
    return make_capsule<DLManagedTensorVersioned> (self, plane, offset, layout, !self->writable);
  return make_capsule<DLManagedTensor> (self, plane, offset, layout, !self->writable);
}

PyObject *
mapping_get_writer (PyObject *self, void *)
{
  uintptr_t writer = ((Mapping *) self)->writer;
  if (!writer)
    Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong (writer);
}

/* a writer's stream told by its caller (the GPU tests hold one back), or None: none pending */
int
mapping_set_writer (PyObject *self, PyObject *value, void *)
{
  uintptr_t writer = 0;
  if (value && value != Py_None) {
    writer = (uintptr_t) PyLong_AsUnsignedLongLong (value);
    if (PyErr_Occurred ())
      return -1;
  }
  ((Mapping *) self)->writer = writer;
  return 0;
}

PyObject *
mapping_get_context (PyObject *self, void *)
{
  return PyLong_FromUnsignedLongLong ((uintptr_t) ((Mapping *) self)->context);
}

PyObject *
mapping_get_event (PyObject *self, void *)
{
  CUevent event = ((Mapping *) self)->event;
  if (!event)
    Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong ((uintptr_t) event);
}

PyMethodDef mapping_methods[] = {
  { "finish_on_host", mapping_finish_on_host, METH_NOARGS, "finish_on_host (): the host waits for the frame's writer" },
  { "export", mapping_export, METH_VARARGS,
    "export (plane, offset, layout, stream, versioned): a plane's DLPack capsule, @stream (-1: none) ordered "
    "after the frame's writer" },
  { nullptr, nullptr, 0, nullptr },
};

PyMemberDef mapping_members[] = {
  { "writable", T_INT, offsetof (Mapping, writable), READONLY, "mapped for writing too" },
  { "address", T_ULONGLONG, offsetof (Mapping, address), READONLY, "the memory's device address" },
  { "size", T_ULONGLONG, offsetof (Mapping, size), READONLY, "the mapped bytes" },
  { "device", T_INT, offsetof (Mapping, device), READONLY, "the CUDA device's ordinal" },
  { "__weaklistoffset__", T_PYSSIZET, offsetof (Mapping, weakrefs), READONLY, nullptr },
  { nullptr, 0, 0, 0, nullptr },
};

PyGetSetDef mapping_getset[] = {
  { "writer", mapping_get_writer, mapping_set_writer, "the writer's stream while its work may be pending, else None",
    nullptr },
  { "context", mapping_get_context, nullptr, "the frame's CUcontext", nullptr },
  { "event", mapping_get_event, nullptr, "the writer's end once recorded, else None", nullptr },
  { nullptr, nullptr, nullptr, nullptr, nullptr },
};

PyType_Slot mapping_slots[] = {
  { Py_tp_doc, (void *) "CudaMapping (buffer, writable, cuda, mem_type): the one CUDA memory of the buffer at "
    "@buffer (its address) mapped for the device, and referenced, until nothing refers to this object" },
  { Py_tp_init, (void *) mapping_init },
  { Py_tp_new, (void *) PyType_GenericNew },
  { Py_tp_dealloc, (void *) mapping_dealloc },
  { Py_tp_methods, mapping_methods },
  { Py_tp_members, mapping_members },
  { Py_tp_getset, mapping_getset },
  { 0, nullptr },
};

PyType_Spec mapping_spec = {
  "cudavision._native.CudaMapping", sizeof (Mapping), 0, Py_TPFLAGS_DEFAULT, mapping_slots,
};

/* ---- a buffer's frame fields -------------------------------------------------------------- */

/* GstVideoMeta's fields from its format to its strides: what a frame's planes depend on, compared
 * as bytes by the module (its geometry cache's key) */
constexpr size_t kMetaAt = offsetof (GstVideoMeta, format);
constexpr size_t kMetaSize = offsetof (GstVideoMeta, stride) + sizeof (GstVideoMeta::stride) - kMetaAt;

PyObject *
clock_time (GstClockTime t)
{
  if (!GST_CLOCK_TIME_IS_VALID (t))
    Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong (t);
}

/* @buffer's one memory (its address: what the module keys a mapping by), or 0 where it holds
 * several (a mapping then merges them, and is the buffer's) */
unsigned long long
one_memory (GstBuffer *buffer)
{
  return gst_buffer_n_memory (buffer) == 1 ? (uintptr_t) gst_buffer_peek_memory (buffer, 0) : 0;
}

/* @buffer's pts, duration and video meta's fields (bytes, or None), as new references */
bool
buffer_fields (GstBuffer *buffer, GType meta_api, PyObject **pts, PyObject **duration, PyObject **fields)
{
  GstMeta *meta = gst_buffer_get_meta (buffer, meta_api);
  *fields = meta ? PyBytes_FromStringAndSize ((const char *) meta + kMetaAt, kMetaSize) : (Py_INCREF (Py_None), Py_None);
  *pts = clock_time (GST_BUFFER_PTS (buffer));
  *duration = clock_time (GST_BUFFER_DURATION (buffer));
  if (*fields && *pts && *duration)
    return true;
  Py_XDECREF (*fields);
  Py_XDECREF (*pts);
  Py_XDECREF (*duration);
  return false;
}

/* read_buffer (buffer, meta_api): (memory, pts, duration, the video meta's fields or None) of the
 * buffer at @buffer, its memory by address (0: several); @meta_api: GST_VIDEO_META_API_TYPE */
PyObject *
module_read_buffer (PyObject *, PyObject *args)
{
  unsigned long long buffer, api;
  PyObject *pts, *duration, *fields;
  if (!PyArg_ParseTuple (args, "KK", &buffer, &api) ||
      !buffer_fields ((GstBuffer *) (uintptr_t) buffer, (GType) api, &pts, &duration, &fields))
    return nullptr;
  return Py_BuildValue ("(KNNN)", one_memory ((GstBuffer *) (uintptr_t) buffer), pts, duration, fields);
}

/* read_sample (sample, meta_api): (buffer, caps, memory, pts, duration, fields) of the sample at
 * @sample, the first three as addresses (the sample's, alive while it is); None where it lacks a
 * buffer or caps */
PyObject *
module_read_sample (PyObject *, PyObject *args)
{
  unsigned long long sample, api;
  if (!PyArg_ParseTuple (args, "KK", &sample, &api))
    return nullptr;
  GstBuffer *buffer = gst_sample_get_buffer ((GstSample *) (uintptr_t) sample);
  GstCaps *caps = gst_sample_get_caps ((GstSample *) (uintptr_t) sample);
  PyObject *pts, *duration, *fields;
  if (!buffer || !caps)
    Py_RETURN_NONE;
  if (!buffer_fields (buffer, (GType) api, &pts, &duration, &fields))
    return nullptr;
  return Py_BuildValue ("(KKKNNN)", (unsigned long long) (uintptr_t) buffer, (unsigned long long) (uintptr_t) caps,
      one_memory (buffer), pts, duration, fields);
}

/* ---- the module ------------------------------------------------------------------------- */

/* bind (functions, error, why): the driver's and libgstcuda's functions by name, a dict of
 * addresses (0 or missing: libgstcuda's memory stream, absent before 1.24), and the exception a
 * mapping raises; @functions None: no driver, and @why says why (a mapping raises it, once the
 * buffer is known to hold CUDA memory) */
PyObject *
module_bind (PyObject *, PyObject *args)
{
  PyObject *functions, *error, *why;
  if (!PyArg_ParseTuple (args, "OOO", &functions, &error, &why))
    return nullptr;
  if (!PyType_Check (error) || !PyObject_IsSubclass (error, PyExc_Exception)) {
    PyErr_SetString (PyExc_TypeError, "bind (): the error is an exception's class");
    return nullptr;
  }
  Driver next = {};
  if (functions != Py_None) {
    if (!PyDict_Check (functions)) {
      PyErr_SetString (PyExc_TypeError, "bind (): the functions are a dict of addresses, or None");
      return nullptr;
    }
    auto **slots = (void **) &next;
    for (int i = 0; i < kDriverSize; i++) {
      PyObject *value = PyDict_GetItemString (functions, kDriverNames[i]);  /* borrowed */
      if (value && value != Py_None) {
        slots[i] = PyLong_AsVoidPtr (value);
        if (PyErr_Occurred ())
          return nullptr;
      }
      bool optional = strncmp (kDriverNames[i], "gst_", 4) == 0;
      if (!slots[i] && !optional) {
        PyErr_Format (PyExc_ValueError, "bind (): no %s", kDriverNames[i]);
        return nullptr;
      }
    }
    if (!next.stream_get_handle)
      next.memory_get_stream = nullptr;
  }
  /* another driver (the tests' stand-in) has contexts of its own */
  if (memcmp (&next, &driver, sizeof (next)) != 0)
    memset (primary, 0, sizeof (primary));
  driver = next;
  bound = functions != Py_None;
  Py_INCREF (error);
  Py_XDECREF (map_error);
  map_error = error;
  Py_INCREF (why);
  Py_XDECREF (unbound_why);
  unbound_why = why;
  Py_RETURN_NONE;
}

PyObject *
module_counters (PyObject *, PyObject *)
{
  return Py_BuildValue ("{sKsKsO}", "events_made", events_made, "pooled_records", pooled_records,
      "record_needs_context", record_needs_context ? Py_True : Py_False);
}

PyObject *
module_exported (PyObject *, PyObject *)
{
  return PyLong_FromSsize_t (exported);
}

PyObject *
module_at_exit (PyObject *, PyObject *)
{
  finalizing = true;
  Py_RETURN_NONE;
}

PyMethodDef module_methods[] = {
  { "at_exit", module_at_exit, METH_NOARGS, "at_exit (): the interpreter is ending, mappings are left as they are" },
  { "bind", module_bind, METH_VARARGS,
    "bind (functions, error, why): the CUDA driver's functions (and libgstcuda's) by address, the error a mapping "
    "raises, and why no driver is bound (functions None)" },
  { "read_buffer", module_read_buffer, METH_VARARGS,
    "read_buffer (buffer, meta_api): (memory, pts, duration, the video meta's fields or None) of the buffer at @buffer" },
  { "read_sample", module_read_sample, METH_VARARGS,
    "read_sample (sample, meta_api): (buffer, caps, memory, pts, duration, fields) of the sample at @sample, or None" },
  { "counters", module_counters, METH_NOARGS,
    "counters (): events made, writers' ends recorded with a pooled event, whether a record needs the context current" },
  { "exported", module_exported, METH_NOARGS, "exported (): the DLPack tensors handed out and not yet deleted" },
  { nullptr, nullptr, 0, nullptr },
};

int
module_exec (PyObject *module)
{
  pool_quark = g_quark_from_static_string ("cudavision-event-pool");
  if (PyModule_AddIntConstant (module, "META_SIZE", kMetaSize) < 0)
    return -1;
  for (auto [spec, name] : { std::pair { &mapping_spec, "CudaMapping" }, std::pair { &buffer_ref_spec, "BufferRef" } }) {
    PyObject *type = PyType_FromSpec (spec);
    if (!type || PyModule_AddObject (module, name, type) < 0) {
      Py_XDECREF (type);
      return -1;
    }
  }
  return 0;
}

PyModuleDef_Slot module_slots[] = {
  { Py_mod_exec, (void *) module_exec },
  { 0, nullptr },
};

PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT, "_native", "cudavision's CUDA route a frame, in C++ (docs/python.md)", 0,
  module_methods, module_slots, nullptr, nullptr, nullptr,
};

}  // namespace

PyMODINIT_FUNC
PyInit__native (void)
{
  return PyModuleDef_Init (&module_def);
}
