/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudavisionfilter.h"

#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/controller/controller.h>

#include <memory>
#include <mutex>
#include <vector>

#include "copy.h"
#include "cuvstreampool.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

enum {
  PROP_0,
  PROP_DEVICE_ID,
  PROP_BACKEND,
};

#define DEFAULT_DEVICE_ID -1
#define DEFAULT_BACKEND GST_CUDA_VISION_BACKEND_AUTO

namespace {

/* What one negotiation fixes: the infos, the memory type of each side and, for the CUDA
 * backend, the staging buffers of a side that is system memory (allocated on first use). */
struct CapsState {
  GstVideoInfo in_info;
  GstVideoInfo out_info;
  cuv::PixelLayout in_layout;
  cuv::PixelLayout out_layout;
  bool in_cuda_caps = false;
  bool out_cuda_caps = false;
#if CUV_HAVE_CUDA
  /* device frame + identical pinned image, one per side */
  struct Staging {
    cuv::CudaBuffer device;
    cuv::CudaBuffer host;
    cuv::Frame device_frame{};
    cuv::Frame host_frame{};
  };
  Staging in_stage;
  Staging out_stage;
#endif
};

}  // namespace

struct GstCudaVisionFilterImpl {
  std::mutex lock;
  /* properties */
  gint device_id = DEFAULT_DEVICE_ID;
  GstCudaVisionBackend backend = DEFAULT_BACKEND;

  /* from start to stop */
  GstCudaContext *context = nullptr;
  bool use_cuda = false;
  /* CUDA memory is offered on the pads until start finds that no context can be had */
  bool cuda_memory_possible = true;
#if CUV_HAVE_CUDA
  cuv::StreamLease stream;
#endif
  std::shared_ptr<CapsState> state;
};

/* GObject allocates the private area, which holds the C++ object made in init. */
struct GstCudaVisionFilterPrivate {
  GstCudaVisionFilterImpl *impl;
};

#define gst_cuda_vision_filter_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstCudaVisionFilter, gst_cuda_vision_filter, GST_TYPE_BASE_TRANSFORM);

static GstCudaVisionFilterImpl *
get_priv (GstCudaVisionFilter *self)
{
  return static_cast<GstCudaVisionFilterPrivate *> (gst_cuda_vision_filter_get_instance_private (self))->impl;
}

GType
gst_cuda_vision_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_VISION_BACKEND_AUTO, "CUDA when a device works, else the CPU reference (with a warning)", "auto"},
    {GST_CUDA_VISION_BACKEND_CUDA, "CUDA only: an error when no CUDA device is usable", "cuda"},
    {GST_CUDA_VISION_BACKEND_CPU, "The CPU reference implementation", "cpu"},
    {0, nullptr, nullptr},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaVisionBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

gboolean
gst_cuda_vision_layout_from_format (GstVideoFormat format, cuv::PixelLayout *layout)
{
  switch (format) {
    case GST_VIDEO_FORMAT_RGBA: *layout = cuv::PixelLayout::RGBA; return TRUE;
    case GST_VIDEO_FORMAT_BGRA: *layout = cuv::PixelLayout::BGRA; return TRUE;
    case GST_VIDEO_FORMAT_RGBx: *layout = cuv::PixelLayout::RGBx; return TRUE;
    case GST_VIDEO_FORMAT_BGRx: *layout = cuv::PixelLayout::BGRx; return TRUE;
    case GST_VIDEO_FORMAT_GRAY8: *layout = cuv::PixelLayout::GRAY8; return TRUE;
    case GST_VIDEO_FORMAT_NV12: *layout = cuv::PixelLayout::NV12; return TRUE;
    case GST_VIDEO_FORMAT_I420: *layout = cuv::PixelLayout::I420; return TRUE;
    default: return FALSE;
  }
}

cuv::Frame
gst_cuda_vision_frame_from_video_frame (const GstVideoFrame *vf, cuv::PixelLayout layout)
{
  cuv::Frame f{};
  f.layout = layout;
  f.width = GST_VIDEO_FRAME_WIDTH (vf);
  f.height = GST_VIDEO_FRAME_HEIGHT (vf);
  f.n_planes = GST_VIDEO_FRAME_N_PLANES (vf);
  for (int p = 0; p < f.n_planes; p++) {
    /* the first component stored in plane p gives the plane's sample grid */
    int comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component (vf->info.finfo, p, comp);
    f.planes[p] = cuv::Plane{static_cast<uint8_t *> (GST_VIDEO_FRAME_PLANE_DATA (vf, p)),
        GST_VIDEO_FRAME_PLANE_STRIDE (vf, p), GST_VIDEO_FRAME_COMP_WIDTH (vf, comp[0]),
        GST_VIDEO_FRAME_COMP_HEIGHT (vf, comp[0])};
  }
  return f;
}

static bool
caps_are_cuda (GstCaps *caps)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, 0);
  return f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

void
gst_cuda_vision_filter_class_add_templates (GstElementClass *klass, const gchar *cuda_formats,
    const gchar *system_formats)
{
  gchar *str = g_strdup_printf (
      GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, "%s") "; " GST_VIDEO_CAPS_MAKE ("%s"),
      cuda_formats, system_formats);
  GstCaps *caps = gst_caps_from_string (str);
  g_free (str);
  gst_element_class_add_pad_template (klass, gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (klass, gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);
}

GstCudaContext *
gst_cuda_vision_filter_get_context (GstCudaVisionFilter *self)
{
  return get_priv (self)->context;
}

void
gst_cuda_vision_filter_update_passthrough (GstCudaVisionFilter *self, gboolean identity)
{
  GstCudaVisionFilterImpl *priv = get_priv (self);
  std::shared_ptr<CapsState> state;
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    state = priv->state;
  }
  /* Before caps are known, passthrough follows @identity alone; set_caps calls again. */
  gboolean same = !state || (state->in_cuda_caps == state->out_cuda_caps &&
      gst_video_info_is_equal (&state->in_info, &state->out_info));
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), identity && same);
}

/* ---- GObject ---- */

static void
gst_cuda_vision_filter_init (GstCudaVisionFilter *self)
{
  auto p = static_cast<GstCudaVisionFilterPrivate *> (gst_cuda_vision_filter_get_instance_private (self));
  p->impl = new GstCudaVisionFilterImpl ();
}

static void
gst_cuda_vision_filter_finalize (GObject *object)
{
  auto p = static_cast<GstCudaVisionFilterPrivate *> (
      gst_cuda_vision_filter_get_instance_private (GST_CUDA_VISION_FILTER (object)));
  delete p->impl;
  p->impl = nullptr;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_vision_filter_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstCudaVisionFilterImpl *priv = get_priv (GST_CUDA_VISION_FILTER (object));
  std::lock_guard<std::mutex> lk (priv->lock);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      priv->device_id = g_value_get_int (value);
      break;
    case PROP_BACKEND:
      priv->backend = static_cast<GstCudaVisionBackend> (g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_cuda_vision_filter_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstCudaVisionFilterImpl *priv = get_priv (GST_CUDA_VISION_FILTER (object));
  std::lock_guard<std::mutex> lk (priv->lock);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      g_value_set_int (value, priv->device_id);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, priv->backend);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

/* ---- context ---- */

static void
gst_cuda_vision_filter_set_context (GstElement *element, GstContext *context)
{
  GstCudaVisionFilterImpl *priv = get_priv (GST_CUDA_VISION_FILTER (element));
  gint device_id;
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    device_id = priv->device_id;
  }
  gst_cuda_handle_set_context (element, context, device_id, &priv->context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_vision_filter_query (GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  GstCudaVisionFilterImpl *priv = get_priv (GST_CUDA_VISION_FILTER (trans));
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_cuda_handle_context_query (GST_ELEMENT (trans), query, priv->context))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction, query);
}

/* Decides the backend; every failure a user must see is an element message naming the cause. */
static gboolean
gst_cuda_vision_filter_start (GstBaseTransform *trans)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = get_priv (self);
  GstElement *element = GST_ELEMENT (trans);
  gint device_id;
  GstCudaVisionBackend backend;
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    device_id = priv->device_id;
    backend = priv->backend;
  }
  priv->use_cuda = false;

#if CUV_HAVE_CUDA
  int count = 0;
  cudaError_t err = cudaGetDeviceCount (&count);
  if (err != cudaSuccess || count == 0) {
    const gchar *why = err == cudaSuccess ? "no CUDA device found"
        : err == cudaErrorInsufficientDriver && !gst_cuda_load_library () ? "no NVIDIA driver (libcuda.so.1) could be loaded"
        : cudaGetErrorString (err);
    if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No usable CUDA device: %s", why),
          ("backend=cuda needs a working NVIDIA GPU and driver; use backend=auto or backend=cpu to run on the CPU"));
      return FALSE;
    }
    if (backend == GST_CUDA_VISION_BACKEND_AUTO)
      GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND, ("No usable CUDA device (%s): running on the CPU", why),
          ("backend=auto falls back to the CPU reference implementation"));
    priv->cuda_memory_possible = false;
    return TRUE;
  }
  if (device_id >= count) {
    if (backend == GST_CUDA_VISION_BACKEND_CPU) {
      priv->cuda_memory_possible = false;
      return TRUE;
    }
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("cuda-device-id %d is out of range: this machine has %d CUDA device(s)", device_id, count),
        ("valid values are -1 (any device) and 0..%d", count - 1));
    return FALSE;
  }
  /* libgstcuda 1.22 creates contexts through its driver loader without loading it first */
  if (!gst_cuda_load_library () || !gst_cuda_ensure_element_context (element, device_id, &priv->context)) {
    if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("Could not create a CUDA context on device %d", device_id),
          ("gst_cuda_ensure_element_context failed: is the NVIDIA driver loadable (libcuda.so.1)?"));
      return FALSE;
    }
    if (backend == GST_CUDA_VISION_BACKEND_AUTO)
      GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
          ("Could not create a CUDA context on device %d: running on the CPU", device_id), (nullptr));
    priv->cuda_memory_possible = false;
    return TRUE;
  }
  priv->cuda_memory_possible = true;
  if (backend == GST_CUDA_VISION_BACKEND_CPU)
    return TRUE;

  auto pool = cuv::StreamPool::for_context (priv->context);
  priv->stream = pool->acquire (&err);
  if (!priv->stream) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("Could not create a CUDA stream: %s", cudaGetErrorString (err)),
        (nullptr));
    gst_clear_object (&priv->context);
    return FALSE;
  }
  priv->use_cuda = true;
  GST_INFO_OBJECT (self, "CUDA backend on context %" GST_PTR_FORMAT, priv->context);
  return TRUE;
#else
  (void) device_id;
  priv->cuda_memory_possible = false;
  if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("This build of cudavision has no CUDA kernels"),
        ("it was configured without nvcc (meson option cuda); use backend=auto or backend=cpu"));
    return FALSE;
  }
  if (backend == GST_CUDA_VISION_BACKEND_AUTO)
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND, ("This build of cudavision has no CUDA kernels: running on the CPU"),
        (nullptr));
  return TRUE;
#endif
}

static gboolean
gst_cuda_vision_filter_stop (GstBaseTransform *trans)
{
  GstCudaVisionFilterImpl *priv = get_priv (GST_CUDA_VISION_FILTER (trans));
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    priv->state.reset ();
  }
#if CUV_HAVE_CUDA
  priv->stream.release ();
#endif
  gst_clear_object (&priv->context);
  priv->use_cuda = false;
  priv->cuda_memory_possible = true;
  return TRUE;
}

/* ---- caps ---- */

/* The same caps in CUDA memory first, then in system memory; the operation keeps format and size. */
static GstCaps *
gst_cuda_vision_filter_transform_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
    GstCaps *filter)
{
  GstCudaVisionFilterImpl *priv = get_priv (GST_CUDA_VISION_FILTER (trans));
  GstCaps *ret = gst_caps_new_empty ();
  for (int pass = priv->cuda_memory_possible ? 0 : 1; pass < 2; pass++) {
    const gchar *feature = pass == 0 ? GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY : GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY;
    for (guint i = 0; i < gst_caps_get_size (caps); i++) {
      GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
      ret = gst_caps_merge_structure_full (ret, s, gst_caps_features_new (feature, nullptr));
    }
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, ret, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (ret);
    ret = tmp;
  }
  GST_DEBUG_OBJECT (trans, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, ret);
  return ret;
}

/* A fixed format that no kernel handles is a user's mistake: say which formats work. */
static gboolean
gst_cuda_vision_filter_accept_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps)
{
  gboolean ok = GST_BASE_TRANSFORM_CLASS (parent_class)->accept_caps (trans, direction, caps);
  if (ok || direction != GST_PAD_SINK || !gst_caps_is_fixed (caps))
    return ok;
  GstPadTemplate *templ = gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (trans), "sink");
  GstCaps *tcaps = gst_pad_template_get_caps (templ);
  const gchar *format = gst_structure_get_string (gst_caps_get_structure (caps, 0), "format");
  const GValue *formats = gst_structure_get_value (gst_caps_get_structure (tcaps, gst_caps_get_size (tcaps) - 1), "format");
  gchar *list = formats ? gst_value_serialize (formats) : g_strdup ("?");
  if (!gst_caps_can_intersect (caps, tcaps)) {
    GST_ELEMENT_ERROR (trans, CORE, NEGOTIATION,
        ("%s does not support the format %s; it takes %s, in system or CUDA memory",
            GST_ELEMENT_NAME (trans), format ? format : "(none)", list),
        ("refused caps %" GST_PTR_FORMAT, caps));
  }
  g_free (list);
  gst_caps_unref (tcaps);
  return ok;
}

static gboolean
gst_cuda_vision_filter_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  GstCudaVisionFilterImpl *priv = get_priv (self);
  auto state = std::make_shared<CapsState> ();

  if (!gst_video_info_from_caps (&state->in_info, incaps) || !gst_video_info_from_caps (&state->out_info, outcaps) ||
      !gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (&state->in_info), &state->in_layout) ||
      !gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (&state->out_info), &state->out_layout)) {
    GST_ERROR_OBJECT (self, "unusable caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, incaps, outcaps);
    return FALSE;
  }
  state->in_cuda_caps = caps_are_cuda (incaps);
  state->out_cuda_caps = caps_are_cuda (outcaps);
  bool same = state->in_cuda_caps == state->out_cuda_caps && gst_video_info_is_equal (&state->in_info, &state->out_info);
  gst_base_transform_set_in_place (trans, klass->supports_in_place && same);
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    priv->state = state;
  }
  if (klass->set_info && !klass->set_info (self, &state->in_info, &state->out_info))
    return FALSE;
  return TRUE;
}

/* ---- allocation ---- */

static GstBufferPool *
make_pool (GstCudaVisionFilterImpl *priv, GstCaps *caps, const GstVideoInfo *info, guint min, guint max, guint *size)
{
  bool cuda = caps_are_cuda (caps) && priv->context;
  GstBufferPool *pool = cuda ? gst_cuda_buffer_pool_new (priv->context) : gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (info), min, max);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return nullptr;
  }
  /* a CUDA pool pads rows; the size it settled on is what buffers take */
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, nullptr, size, nullptr, nullptr);
  gst_structure_free (config);
  return pool;
}

static gboolean
gst_cuda_vision_filter_propose_allocation (GstBaseTransform *trans, GstQuery *decide_query, GstQuery *query)
{
  GstCudaVisionFilterImpl *priv = get_priv (GST_CUDA_VISION_FILTER (trans));
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans, decide_query, query))
    return FALSE;
  /* passthrough: the parent forwarded the query downstream */
  if (!decide_query)
    return TRUE;

  GstCaps *caps;
  gst_query_parse_allocation (query, &caps, nullptr);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  if (gst_query_get_n_allocation_pools (query) == 0) {
    guint size = 0;
    GstBufferPool *pool = make_pool (priv, caps, &info, 0, 0, &size);
    if (!pool)
      return FALSE;
    gst_query_add_allocation_pool (query, pool, size, 0, 0);
    gst_object_unref (pool);
  }
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr);
  return TRUE;
}

static gboolean
gst_cuda_vision_filter_decide_allocation (GstBaseTransform *trans, GstQuery *query)
{
  GstCudaVisionFilterImpl *priv = get_priv (GST_CUDA_VISION_FILTER (trans));
  GstCaps *caps;
  gst_query_parse_allocation (query, &caps, nullptr);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;

  bool cuda = caps_are_cuda (caps);
  GstBufferPool *pool = nullptr;
  guint size = GST_VIDEO_INFO_SIZE (&info), min = 0, max = 0;
  bool have = gst_query_get_n_allocation_pools (query) > 0;
  if (have)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);

  /* Keep downstream's pool only when it gives the memory we write: a CUDA pool of our context,
   * or any pool for system memory. */
  if (pool && cuda && !(GST_IS_CUDA_BUFFER_POOL (pool) && GST_CUDA_BUFFER_POOL (pool)->context == priv->context))
    gst_clear_object (&pool);
  if (pool) {
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, MAX (size, GST_VIDEO_INFO_SIZE (&info)), min, max);
    if (gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr))
      gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config))
      gst_clear_object (&pool);
    else {
      config = gst_buffer_pool_get_config (pool);
      gst_buffer_pool_config_get_params (config, nullptr, &size, nullptr, nullptr);
      gst_structure_free (config);
    }
  }
  if (!pool)
    pool = make_pool (priv, caps, &info, min, max, &size);
  if (!pool) {
    GST_ERROR_OBJECT (trans, "no usable output pool for %" GST_PTR_FORMAT, caps);
    return FALSE;
  }
  if (have)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans, query);
}

/* ---- processing ---- */

static void
gst_cuda_vision_filter_before_transform (GstBaseTransform *trans, GstBuffer *buffer)
{
  GstClockTime ts = gst_segment_to_stream_time (&trans->segment, GST_FORMAT_TIME, GST_BUFFER_PTS (buffer));
  if (GST_CLOCK_TIME_IS_VALID (ts))
    gst_object_sync_values (GST_OBJECT (trans), ts);
}

static void
post_map_error (GstCudaVisionFilter *self, GstBuffer *buf, const GstVideoInfo *info, const char *side)
{
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("The %s buffer does not hold the %dx%d %s frame its caps describe", side, GST_VIDEO_INFO_WIDTH (info),
          GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_NAME (info)),
      ("buffer of %" G_GSIZE_FORMAT " bytes, the caps need %" G_GSIZE_FORMAT " bytes (or its video meta is wrong)",
          gst_buffer_get_size (buf), GST_VIDEO_INFO_SIZE (info)));
}

#if CUV_HAVE_CUDA
static bool
is_device_buffer (GstCudaVisionFilterImpl *priv, GstBuffer *buf)
{
  if (!priv->context || gst_buffer_n_memory (buf) != 1)
    return false;
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  return gst_is_cuda_memory (mem) && GST_CUDA_MEMORY_CAST (mem)->context == priv->context;
}

/* Copies every plane between a device view and a host view (synchronously). */
static bool
copy_planes (GstCudaVisionFilter *self, const cuv::Frame &src, const cuv::Frame &dst, cudaMemcpyKind kind)
{
  for (int p = 0; p < src.n_planes; p++) {
    size_t row = static_cast<size_t> (src.planes[p].width) * cuv::plane_sample_bytes (src.layout, p);
    if (!CUV_CUDA_OK (self, cudaMemcpy2D (dst.planes[p].data, dst.planes[p].pitch, src.planes[p].data,
            src.planes[p].pitch, row, src.planes[p].height, kind)))
      return false;
  }
  return true;
}

/* The CPU backend on CUDA memory of our context: GStreamer 1.22's host mapping of GstCudaMemory
 * misplaces I420 chroma, so the planes are copied through host memory here instead. */
static GstFlowReturn
process_cpu_staged (GstCudaVisionFilter *self, CapsState &st, GstBuffer *inbuf, GstBuffer *outbuf, bool in_dev,
    bool out_dev)
{
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  GstCudaVisionFilterImpl *priv = get_priv (self);
  const bool in_place = inbuf == outbuf;
  cuv::ContextGuard guard (priv->context);
  if (!guard.ok ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, ("Could not make the CUDA context current"), (nullptr));
    return GST_FLOW_ERROR;
  }
  auto host_frame = [] (std::vector<uint8_t> &store, const GstVideoInfo *info, cuv::PixelLayout layout) {
    int pitches[3] = {0, 0, 0};
    int w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
    for (int p = 0; p < cuv::layout_n_planes (layout); p++)
      pitches[p] = cuv::min_pitch (layout, w, p, 4);
    store.resize (cuv::frame_bytes (cuv::make_frame (layout, w, h, nullptr, pitches)));
    return cuv::make_frame (layout, w, h, store.data (), pitches);
  };
  auto flags = [] (GstMapFlags f, bool dev) { return dev ? static_cast<GstMapFlags> (f | GST_MAP_CUDA) : f; };

  GstVideoFrame vin, vout;
  if (!gst_video_frame_map (&vin, &st.in_info, inbuf, flags (in_place ? GST_MAP_READWRITE : GST_MAP_READ, in_dev))) {
    post_map_error (self, inbuf, &st.in_info, "input");
    return GST_FLOW_ERROR;
  }
  if (!in_place && !gst_video_frame_map (&vout, &st.out_info, outbuf, flags (GST_MAP_WRITE, out_dev))) {
    gst_video_frame_unmap (&vin);
    post_map_error (self, outbuf, &st.out_info, "output");
    return GST_FLOW_ERROR;
  }
  cuv::Frame in_view = gst_cuda_vision_frame_from_video_frame (&vin, st.in_layout);
  cuv::Frame out_view = in_place ? in_view : gst_cuda_vision_frame_from_video_frame (&vout, st.out_layout);
  std::vector<uint8_t> in_store, out_store;
  cuv::Frame fin = in_dev ? host_frame (in_store, &st.in_info, st.in_layout) : in_view;
  cuv::Frame fout = in_place ? fin : out_dev ? host_frame (out_store, &st.out_info, st.out_layout) : out_view;

  GstFlowReturn ret = GST_FLOW_ERROR;
  if (!in_dev || copy_planes (self, in_view, fin, cudaMemcpyDeviceToHost)) {
    ret = klass->transform_cpu (self, &fin, &fout);
    if (ret == GST_FLOW_OK && out_dev && !copy_planes (self, fout, out_view, cudaMemcpyHostToDevice))
      ret = GST_FLOW_ERROR;
  }
  if (!in_place)
    gst_video_frame_unmap (&vout);
  gst_video_frame_unmap (&vin);
  if (ret == GST_FLOW_ERROR)
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Copying a frame between CUDA and host memory failed"), (nullptr));
  return ret;
}
#endif

static GstFlowReturn
process_cpu (GstCudaVisionFilter *self, CapsState &st, GstBuffer *inbuf, GstBuffer *outbuf)
{
#if CUV_HAVE_CUDA
  {
    GstCudaVisionFilterImpl *priv = get_priv (self);
    const bool in_dev = is_device_buffer (priv, inbuf);
    const bool out_dev = inbuf == outbuf ? in_dev : is_device_buffer (priv, outbuf);
    if (in_dev || out_dev)
      return process_cpu_staged (self, st, inbuf, outbuf, in_dev, out_dev);
  }
#endif
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  const bool in_place = inbuf == outbuf;
  GstVideoFrame vin, vout;
  if (!gst_video_frame_map (&vin, &st.in_info, inbuf, in_place ? GST_MAP_READWRITE : GST_MAP_READ)) {
    post_map_error (self, inbuf, &st.in_info, "input");
    return GST_FLOW_ERROR;
  }
  if (!in_place && !gst_video_frame_map (&vout, &st.out_info, outbuf, GST_MAP_WRITE)) {
    gst_video_frame_unmap (&vin);
    post_map_error (self, outbuf, &st.out_info, "output");
    return GST_FLOW_ERROR;
  }
  cuv::Frame fin = gst_cuda_vision_frame_from_video_frame (&vin, st.in_layout);
  cuv::Frame fout = in_place ? fin : gst_cuda_vision_frame_from_video_frame (&vout, st.out_layout);
  GstFlowReturn ret = klass->transform_cpu (self, &fin, &fout);
  if (!in_place)
    gst_video_frame_unmap (&vout);
  gst_video_frame_unmap (&vin);
  return ret;
}

#if CUV_HAVE_CUDA
/* A device frame with rows padded to 256 bytes and a pinned host image of the same layout, so
 * that one asynchronous copy moves it either way. */
static bool
ensure_staging (GstCudaVisionFilter *self, GstCudaVisionFilterImpl *priv, CapsState::Staging &stage,
    const GstVideoInfo *info, cuv::PixelLayout layout)
{
  if (stage.device)
    return true;
  int pitches[3] = {0, 0, 0};
  int w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  for (int p = 0; p < cuv::layout_n_planes (layout); p++)
    pitches[p] = cuv::min_pitch (layout, w, p, 256);
  cuv::Frame shape = cuv::make_frame (layout, w, h, nullptr, pitches);
  size_t bytes = cuv::frame_bytes (shape);
  if (!CUV_CUDA_OK (self, stage.device.allocate (priv->context, cuv::CudaBuffer::Kind::Device, bytes)) ||
      !CUV_CUDA_OK (self, stage.host.allocate (priv->context, cuv::CudaBuffer::Kind::Pinned, bytes))) {
    stage.device.reset ();
    stage.host.reset ();
    return false;
  }
  stage.device_frame = cuv::make_frame (layout, w, h, stage.device.data (), pitches);
  stage.host_frame = cuv::make_frame (layout, w, h, stage.host.data (), pitches);
  return true;
}

static GstFlowReturn
process_cuda (GstCudaVisionFilter *self, CapsState &st, GstBuffer *inbuf, GstBuffer *outbuf)
{
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  GstCudaVisionFilterImpl *priv = get_priv (self);
  const bool in_place = inbuf == outbuf;
  const bool in_dev = is_device_buffer (priv, inbuf);
  const bool out_dev = in_place ? in_dev : is_device_buffer (priv, outbuf);
  cudaStream_t stream = priv->stream.get ();

  cuv::ContextGuard guard (priv->context);
  if (!guard.ok ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, ("Could not make the CUDA context current"), (nullptr));
    return GST_FLOW_ERROR;
  }

  GstMapFlags in_flags = in_place ? GST_MAP_READWRITE : GST_MAP_READ;
  if (in_dev)
    in_flags = static_cast<GstMapFlags> (in_flags | GST_MAP_CUDA);
  GstVideoFrame vin, vout;
  if (!gst_video_frame_map (&vin, &st.in_info, inbuf, in_flags)) {
    post_map_error (self, inbuf, &st.in_info, "input");
    return GST_FLOW_ERROR;
  }
  if (!in_place) {
    GstMapFlags out_flags = out_dev ? static_cast<GstMapFlags> (GST_MAP_WRITE | GST_MAP_CUDA) : GST_MAP_WRITE;
    if (!gst_video_frame_map (&vout, &st.out_info, outbuf, out_flags)) {
      gst_video_frame_unmap (&vin);
      post_map_error (self, outbuf, &st.out_info, "output");
      return GST_FLOW_ERROR;
    }
  }
  GstVideoFrame *vdst = in_place ? &vin : &vout;

  GstFlowReturn ret = GST_FLOW_ERROR;
  bool ok = true;
  cuv::Frame fin, fout;
#if GST_CHECK_VERSION(1, 24, 0)
  if (in_dev)
    gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (gst_buffer_peek_memory (inbuf, 0)));
#endif
  if (in_dev) {
    fin = gst_cuda_vision_frame_from_video_frame (&vin, st.in_layout);
  } else {
    ok = ensure_staging (self, priv, st.in_stage, &st.in_info, st.in_layout);
    if (ok) {
      cuv::copy_frame_cpu (gst_cuda_vision_frame_from_video_frame (&vin, st.in_layout), st.in_stage.host_frame);
      ok = CUV_CUDA_OK (self, cudaMemcpyAsync (st.in_stage.device.data (), st.in_stage.host.data (),
          st.in_stage.device.size (), cudaMemcpyHostToDevice, stream));
      fin = st.in_stage.device_frame;
    }
  }
  CapsState::Staging &out_stage = in_place ? st.in_stage : st.out_stage;
  if (ok) {
    if (out_dev)
      fout = gst_cuda_vision_frame_from_video_frame (vdst, st.out_layout);
    else if (in_place)
      fout = fin;
    else if ((ok = ensure_staging (self, priv, out_stage, &st.out_info, st.out_layout)))
      fout = out_stage.device_frame;
  }
  if (ok) {
    ret = klass->transform_cuda (self, &fin, &fout, stream);
    ok = ret == GST_FLOW_OK;
  }
  if (ok && !out_dev)
    ok = CUV_CUDA_OK (self, cudaMemcpyAsync (out_stage.host.data (), out_stage.device.data (), out_stage.device.size (),
        cudaMemcpyDeviceToHost, stream));
  /* GStreamer 1.22's contract: the work is complete before the buffer leaves the element. */
  if (!CUV_CUDA_OK (self, cudaStreamSynchronize (stream)))
    ok = false;
  if (ok && !out_dev)
    cuv::copy_frame_cpu (out_stage.host_frame, gst_cuda_vision_frame_from_video_frame (vdst, st.out_layout));

  if (!in_place)
    gst_video_frame_unmap (&vout);
  gst_video_frame_unmap (&vin);

  if (!ok) {
    cudaError_t err = cudaGetLastError ();
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Processing a frame on the GPU failed"),
        ("%s; the debug log (GST_DEBUG=cudavision:5) names the failing call", err != cudaSuccess ? cudaGetErrorString (err) : "see the log"));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}
#endif

static GstFlowReturn
process (GstCudaVisionFilter *self, GstBuffer *inbuf, GstBuffer *outbuf)
{
  GstCudaVisionFilterImpl *priv = get_priv (self);
  std::shared_ptr<CapsState> state;
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    state = priv->state;
  }
  if (!state) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Received a buffer before caps were negotiated"), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
#if CUV_HAVE_CUDA
  if (priv->use_cuda)
    return process_cuda (self, *state, inbuf, outbuf);
#endif
  return process_cpu (self, *state, inbuf, outbuf);
}

static GstFlowReturn
gst_cuda_vision_filter_transform (GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer *outbuf)
{
  return process (GST_CUDA_VISION_FILTER (trans), inbuf, outbuf);
}

static GstFlowReturn
gst_cuda_vision_filter_transform_ip (GstBaseTransform *trans, GstBuffer *buf)
{
  return process (GST_CUDA_VISION_FILTER (trans), buf, buf);
}

static void
gst_cuda_vision_filter_class_init (GstCudaVisionFilterClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->finalize = gst_cuda_vision_filter_finalize;
  gobject_class->set_property = gst_cuda_vision_filter_set_property;
  gobject_class->get_property = gst_cuda_vision_filter_get_property;

  /**
   * GstCudaVisionFilter:cuda-device-id:
   *
   * The CUDA device to run on; -1 takes the context a neighbouring CUDA element already uses, or
   * device 0.
   */
  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to run on (-1 = the one neighbouring CUDA elements use, else device 0); "
          "a value past the device count is an error at start",
          -1, G_MAXINT, DEFAULT_DEVICE_ID,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
  /**
   * GstCudaVisionFilter:backend:
   *
   * Where frames are processed: `auto` uses CUDA when a device works and otherwise the CPU
   * reference (posting one warning), `cuda` fails at start without a usable device, `cpu` always
   * runs the CPU reference (which gives the same bytes).
   */
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where frames are processed: auto (CUDA if a device works, else the CPU with a warning), "
          "cuda (error without a usable device) or cpu (the CPU reference; same output bytes)",
          GST_TYPE_CUDA_VISION_BACKEND, DEFAULT_BACKEND,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_set_context);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_stop);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_query);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_transform_caps);
  trans_class->accept_caps = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_accept_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_set_caps);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_propose_allocation);
  trans_class->decide_allocation = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_decide_allocation);
  trans_class->before_transform = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_before_transform);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_transform);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_transform_ip);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_VISION_FILTER, static_cast<GstPluginAPIFlags> (0));
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_VISION_BACKEND, static_cast<GstPluginAPIFlags> (0));
  gst_cuda_memory_init_once ();
}
