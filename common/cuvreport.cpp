/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuvreport.h"

namespace cuv {

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
custom_meta_structure (GstBuffer *buffer, const char *name)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buffer, name);
  if (!meta)
    meta = gst_buffer_add_custom_meta (buffer, name);
  return meta ? gst_custom_meta_get_structure (meta) : nullptr;
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
