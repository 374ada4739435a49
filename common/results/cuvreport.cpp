/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/results/cuvreport.h"

namespace cuv {

namespace {

void
free_post_lock (gpointer data)
{
  auto *lock = static_cast<GRecMutex *> (data);
  g_rec_mutex_clear (lock);
  g_free (lock);
}

/* @top's lock, made by the first post that needs it (two at once: one of them wins). Recursive:
 * a sync handler may post again from the thread that holds it. */
GRecMutex *
post_lock (GObject *top)
{
  static const GQuark quark = g_quark_from_static_string ("cuv-post-in-turn");
  if (auto *lock = static_cast<GRecMutex *> (g_object_get_qdata (top, quark)))
    return lock;
  auto *made = g_new0 (GRecMutex, 1);
  g_rec_mutex_init (made);
  if (g_object_replace_qdata (top, quark, nullptr, made, free_post_lock, nullptr))
    return made;
  free_post_lock (made);
  return static_cast<GRecMutex *> (g_object_get_qdata (top, quark));
}

}  // namespace

/* GstBus queues messages in a GstAtomicQueue, whose push spins until every earlier writer has
 * finished: with more posting threads than cores, a preempted writer keeps the others spinning on
 * the cores it needs, and a pipeline of many branches all but stops (docs/design.md). The message
 * climbs the bins to the top-level one, whose bus takes it, so that bin's lock puts our posts to
 * that bus in turn; other pipelines' posts never wait for it. */
gboolean
post_in_turn (GstElement *element, GstMessage *message)
{
  GstObject *top = GST_OBJECT (gst_object_ref (element));
  while (GstObject *parent = gst_object_get_parent (top)) {
    gst_object_unref (top);
    top = parent;
  }
  GRecMutex *lock = post_lock (G_OBJECT (top));
  g_rec_mutex_lock (lock);
  const gboolean posted = gst_element_post_message (element, message);
  g_rec_mutex_unlock (lock);
  gst_object_unref (top);
  return posted;
}

bool
IntervalClock::add (GstClockTime pts, GstClockTime duration, guint64 interval)
{
  if (frames_ == 0) {
    start_ = pts;
    end_ = pts;
  }
  frames_++;
  if (interval == 0 || !GST_CLOCK_TIME_IS_VALID (start_) || !GST_CLOCK_TIME_IS_VALID (pts)) {
    if (GST_CLOCK_TIME_IS_VALID (pts))
      end_ = MAX (end_, GST_CLOCK_TIME_IS_VALID (duration) ? pts + duration : pts);
    return true;
  }
  /* a timestamp before the interval's start (a source that restarts, a splice without a flush)
   * ends the interval with the frames before it; this frame is its last */
  if (pts < start_)
    return true;
  end_ = MAX (end_, GST_CLOCK_TIME_IS_VALID (duration) ? pts + duration : pts);
  return end_ - start_ >= interval;
}

GstStructure *
IntervalClock::new_structure (const char *name, const GstSegment &segment) const
{
  GstClockTime stream_time = GST_CLOCK_TIME_NONE, running_time = GST_CLOCK_TIME_NONE, duration = GST_CLOCK_TIME_NONE;
  if (GST_CLOCK_TIME_IS_VALID (start_)) {
    stream_time = gst_segment_to_stream_time (&segment, GST_FORMAT_TIME, start_);
    running_time = gst_segment_to_running_time (&segment, GST_FORMAT_TIME, start_);
    duration = end_ - start_;
  }
  return gst_structure_new (name, "timestamp", G_TYPE_UINT64, start_, "stream-time", G_TYPE_UINT64, stream_time,
      "running-time", G_TYPE_UINT64, running_time, "duration", G_TYPE_UINT64, duration, nullptr);
}

void
register_custom_meta (const char *name)
{
  if (gst_meta_get_info (name))
    return;
  static const gchar *tags[] = {nullptr};
  gst_meta_register_custom (name, tags, nullptr, nullptr, nullptr);
}

GstStructure *
custom_meta_structure (GstBuffer *buffer, const char *name, const char *element)
{
  gpointer state = nullptr;
  while (GstMeta *meta = gst_buffer_iterate_meta (buffer, &state)) {
    if (!gst_meta_info_is_custom (meta->info) || !gst_custom_meta_has_name (reinterpret_cast<GstCustomMeta *> (meta), name))
      continue;
    GstStructure *s = gst_custom_meta_get_structure (reinterpret_cast<GstCustomMeta *> (meta));
    if (s && g_strcmp0 (gst_structure_get_string (s, "element"), element) == 0)
      return s;
  }
  GstCustomMeta *added = gst_buffer_add_custom_meta (buffer, name);
  GstStructure *s = added ? gst_custom_meta_get_structure (added) : nullptr;
  if (s)
    gst_structure_set (s, "element", G_TYPE_STRING, element, nullptr);
  return s;
}

/* Each value is taken into the array, not copied: a histogram's 256 values on every frame's meta
 * and message were a fifth of the host's time in the chain of 4 at 1920x1080 (bench_pipelines
 * --profile-host, docs/performance-log.md). */
void
set_uint64_array (GstStructure *s, const char *field, const guint64 *values, guint n)
{
  GValue array = G_VALUE_INIT;
  gst_value_array_init (&array, n);
  for (guint i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_UINT64);
    g_value_set_uint64 (&v, values[i]);
    gst_value_array_append_and_take_value (&array, &v);
  }
  gst_structure_take_value (s, field, &array);
}

}  // namespace cuv
