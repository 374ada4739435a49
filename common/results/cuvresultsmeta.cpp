/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An analyser's results that follow its frame to the next of our elements (cuvresultsmeta.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/results/cuvresultsmeta.h"

#if CUV_HAVE_CUDA
#include <chrono>
#include <utility>

#include "common/results/cuvanalytics.h"
#include "common/results/cuvreport.h"
#include "common/cuda/cuvsync.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

namespace cuv {

/* How long another thread waits for the owner to publish a frame's results: the owner does so as
 * soon as its push returns, which a queue's push does at once. Past this, the buffer goes on
 * without them (a warning), rather than a pipeline that hangs. */
static constexpr std::chrono::seconds kPublishTimeout{5};

namespace {

/* Adds one of an analyser's metas on @src to @dest as the analyser itself adds it to the buffer it
 * publishes on: its custom meta's fields into @dest's custom meta of that name and element, its
 * tensors into @dest's one tensor meta; any other meta copied. */
gboolean
merge_meta (GstBuffer *src, GstMeta **meta, gpointer dest)
{
  GstBuffer *to = static_cast<GstBuffer *> (dest);
  const GstMetaInfo *info = (*meta)->info;
  if (gst_meta_info_is_custom (info)) {
    const GstStructure *from = gst_custom_meta_get_structure (reinterpret_cast<GstCustomMeta *> (*meta));
    const gchar *element = from ? gst_structure_get_string (from, "element") : nullptr;
    GstStructure *into = custom_meta_structure (to, g_type_name (info->type), element ? element : "");
    if (from && into)
      gst_structure_foreach (from,
          [] (GQuark field, const GValue *value, gpointer s) -> gboolean {
            gst_structure_id_set_value (static_cast<GstStructure *> (s), field, value);
            return TRUE;
          },
          into);
    return TRUE;
  }
#if HAVE_GST_TENSOR_META
  if (info->api == GST_TENSOR_META_API_TYPE) {
    merge_tensors (to, reinterpret_cast<const GstTensorMeta *> (*meta));
    return TRUE;
  }
#endif
  if (info->transform_func) {
    GstMetaTransformCopy copy = {FALSE, 0, static_cast<gsize> (-1)};
    info->transform_func (to, *meta, src, _gst_meta_transform_copy, &copy);
  }
  return TRUE;
}

void
merge_metas (GstBuffer *dest, GstBuffer *src)
{
  gst_buffer_foreach_meta (src, merge_meta, dest);
}

}  // namespace

PendingResults::PendingResults (GstCudaVisionFilter *owner, Publish publish, std::shared_ptr<FrameResults> value,
    GstCudaContext *ctx, cudaStream_t stream, GstBuffer *frame)
    : owner_thread_ (g_thread_self ()), owner_ (owner), publish_ (publish), value_ (std::move (value)), context_ (ctx),
      stream_ (stream), results_ (gst_buffer_new ())
{
  gst_buffer_copy_into (results_, frame, GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
}

PendingResults::~PendingResults ()
{
  gst_buffer_unref (results_);
}

bool
PendingResults::publish_locked (cudaStream_t waited)
{
  bool ok = true;
  if (waited != stream_) {
    ContextGuard guard (context_);
    ok = guard.ok () && finish_before_push (stream_, nullptr) == cudaSuccess;
  }
  if (ok) {
    publish_ (owner_, results_, value_.get ());
  } else {
    GST_ELEMENT_ERROR (owner_, STREAM, FAILED, ("Processing a frame on the GPU failed"),
        ("waiting for CUDA stream %p, for the frame's results, failed", stream_));
  }
  done_ = true;
  owner_ = nullptr;
  value_.reset ();
  done_cv_.notify_all ();
  return ok;
}

bool
PendingResults::complete ()
{
  std::lock_guard<std::mutex> lk (lock_);
  return done_ || publish_locked (nullptr);
}

void
PendingResults::cancel ()
{
  std::lock_guard<std::mutex> lk (lock_);
  done_ = true;
  owner_ = nullptr;
  value_.reset ();
  done_cv_.notify_all ();
}

void
PendingResults::hold_in_flight ()
{
  std::lock_guard<std::mutex> lk (lock_);
  if (!done_ && g_thread_self () == owner_thread_)
    held_ = true;
}

bool
PendingResults::held () const
{
  std::lock_guard<std::mutex> lk (lock_);
  return held_ && !done_;
}

void
PendingResults::put_on (GstBuffer *buf, cudaStream_t waited)
{
  std::unique_lock<std::mutex> lk (lock_);
  if (!done_ && g_thread_self () == owner_thread_) {
    /* inside the owner's push, on the thread that alone adds to its interval */
    publish_locked (waited);
  } else if (!done_ && !done_cv_.wait_for (lk, kPublishTimeout, [this] { return done_; })) {
    GST_WARNING ("an analyser's results for %" GST_TIME_FORMAT " did not come within %d s: the buffer leaves without them",
        GST_TIME_ARGS (GST_BUFFER_PTS (results_)), static_cast<int> (kPublishTimeout.count ()));
    return;
  }
  lk.unlock ();
  merge_metas (buf, results_);
}

namespace {

struct ResultsMeta {
  GstMeta meta;
  Results *results;
};

ResultsMeta *
find (GstBuffer *buf)
{
  return reinterpret_cast<ResultsMeta *> (gst_buffer_get_meta (buf, results_meta_api_type ()));
}

gboolean
meta_init (GstMeta *meta, gpointer, GstBuffer *)
{
  reinterpret_cast<ResultsMeta *> (meta)->results = new Results ();
  return TRUE;
}

void
meta_free (GstMeta *meta, GstBuffer *)
{
  delete reinterpret_cast<ResultsMeta *> (meta)->results;
}

const GstMetaInfo *meta_info ();

ResultsMeta *
find_or_add (GstBuffer *buf)
{
  ResultsMeta *m = find (buf);
  return m ? m : reinterpret_cast<ResultsMeta *> (gst_buffer_add_meta (buf, meta_info (), nullptr));
}

/* A copy of the buffer (a tee's frame made writable, videorate's repeat) is the same frame: it
 * carries the same results. Any other transform drops them: only our elements, which take them
 * from the input themselves, read them. */
gboolean
meta_transform (GstBuffer *dest, GstMeta *meta, GstBuffer *, GQuark type, gpointer)
{
  if (!GST_META_TRANSFORM_IS_COPY (type))
    return FALSE;
  const Results &from = *reinterpret_cast<const ResultsMeta *> (meta)->results;
  ResultsMeta *to = find_or_add (dest);
  if (!to)
    return FALSE;
  to->results->insert (to->results->end (), from.begin (), from.end ());
  return TRUE;
}

const GstMetaInfo *
meta_info ()
{
  static const GstMetaInfo *info = [] {
    return gst_meta_register (results_meta_api_type (), "CuvResultsMeta", sizeof (ResultsMeta), meta_init, meta_free,
        meta_transform);
  }();
  return info;
}

}  // namespace

GType
results_meta_api_type ()
{
  static GType type = [] {
    static const gchar *tags[] = {nullptr};
    return gst_meta_api_type_register ("CuvResultsMetaAPI", tags);
  }();
  return type;
}

bool
publish_unheld (Deferred &deferred, bool all)
{
  size_t upto = 0;
  for (size_t i = 0; i < deferred.size (); i++)
    if (all || !deferred[i]->held ())
      upto = i + 1;
  bool ok = true;
  for (; upto > 0; upto--) {
    ok = deferred.front ()->complete () && ok;
    deferred.pop_front ();
  }
  return ok;
}

bool
publish_oldest (Deferred &deferred, size_t keep)
{
  bool ok = true;
  while (deferred.size () > keep) {
    ok = deferred.front ()->complete () && ok;
    deferred.pop_front ();
  }
  return ok;
}

void
cancel_all (Deferred &deferred)
{
  for (const std::shared_ptr<PendingResults> &d : deferred)
    d->cancel ();
  deferred.clear ();
}

Results
carried_results (GstBuffer *buf)
{
  const ResultsMeta *m = buf ? find (buf) : nullptr;
  return m ? *m->results : Results{};
}

void
hand_on_results (GstBuffer *buf, Results results)
{
  ResultsMeta *m = find (buf);
  if (results.empty ()) {
    if (m)
      gst_buffer_remove_meta (buf, &m->meta);
    return;
  }
  if (!m)
    m = find_or_add (buf);
  if (m)
    *m->results = std::move (results);
}

void
put_results_on (GstBuffer *buf, Results results, cudaStream_t waited)
{
  if (ResultsMeta *m = find (buf))
    gst_buffer_remove_meta (buf, &m->meta);
  for (const std::shared_ptr<PendingResults> &r : results)
    r->put_on (buf, waited);
}

}  // namespace cuv
#endif
