/* gst-cudavision: negotiation and allocation of GstCudaVisionFilter: which caps each pad offers
 * (CUDA memory first, then system memory), the error a refused format gets, and the buffer pools
 * proposed upstream and used for the output. The base class's GstBaseTransform vfuncs call these;
 * they call nothing back. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/video/video.h>

#include "common/route/cuvroute.h"
#include "common/cuda/cuvsync.h"

namespace cuv {

/* Whether the first structure of @caps is CUDA memory. */
bool caps_are_cuda (GstCaps *caps);

/* @caps in CUDA memory (unless @cuda_possible is false) and then in system memory, intersected
 * with @filter when given; a new reference. */
GstCaps *both_memories (GstCaps *caps, bool cuda_possible, GstCaps *filter);

/* @caps with its structures in CUDA memory moved before the others (after them where @cuda is
 * false), each group in its order; a new reference. */
GstCaps *memory_first (GstCaps *caps, bool cuda);

/* A sink caps query answered (GstBaseTransform answers in the asker's order, and an upstream
 * element that can give either memory, cudaupload or a decoder, lists system memory first): its
 * result reordered with CUDA memory first where @cuda (the CUDA backend, so that
 * `cudaupload ! cudasobel` hands it CUDA memory, as a user means it to), else system memory first
 * (CUDA memory costs the CPU backend a copy a frame). */
void order_caps_result (GstQuery *query, bool cuda);

/* A latency query answered upstream: one frame of @info more (a frame in flight leaves when the
 * next arrives); nothing where the frame rate is unknown. */
void add_frame_latency (GstQuery *query, const GstVideoInfo *info);

/* A query the base class answered, completed for the element whose @route it is: a latency query
 * one frame more where a frame may be left @in_flight, a sink caps query in the backend's order
 * (the two above). */
void complete_answer (GstQuery *query, GstPadDirection direction, const Route &route, bool in_flight);

/* Whether the element upstream of @sinkpad is live (a latency query; without an answer, it
 * counts as live). */
bool upstream_is_live (GstPad *sinkpad);

/* The caps state of negotiated @incaps and @outcaps: their infos, pixel layouts and memory
 * types; NULL for caps no kernel takes (logged), or a packed 4:2:2 frame of odd width (an error
 * for the user: a pair's second half lies past it, and GStreamer's own CUDA copies leave it out,
 * docs/design.md). */
std::shared_ptr<CapsState> caps_state_for (GstElement *element, GstCaps *incaps, GstCaps *outcaps);

/* Posts the negotiation error a user reads when fixed sink @caps have a format that @element's
 * sink template lacks (and nothing when the caps would intersect). */
void post_unsupported_format (GstElement *element, GstCaps *caps);

/* A pool for @caps, @info: CUDA memory of @context when the caps are CUDA memory and there is a
 * context, else a video pool of system memory, page-locked memory of @context with @pinned
 * (cuvpinned.h: for the CUDA backend, whose copies it makes one DMA each); with video meta. A
 * CUDA pool's memory carries @stream where one is given (GStreamer 1.24+, cuvsync.h). @size gets
 * the buffer size the pool settled on (a CUDA pool pads rows). NULL when it cannot be configured. */
GstBufferPool *make_pool (GstCudaContext *context, GstCaps *caps, const GstVideoInfo *info, guint min, guint max,
    guint *size, GstCudaStream *stream = nullptr, bool pinned = false);

/* Fills an upstream allocation @query: a pool of our own when none is there yet (@held buffers
 * at least: a temporal element holds one; a CUDA pool carries @stream; a system-memory pool is
 * page-locked with @pinned, and its allocator is offered too), and video meta. FALSE without
 * usable caps. */
bool propose_allocation (GstCudaContext *context, GstQuery *query, guint held, GstCudaStream *stream, bool pinned);

/* Picks the output pool in downstream's allocation @query: downstream's own when it gives the
 * memory we write (a CUDA pool of @context, or any pool for system memory), else one of ours,
 * with room for the @held buffers the element keeps (a frame in flight); a system-memory pool of
 * ours is page-locked with @pinned.
 * 1.24+, for CUDA memory: when downstream's pool carries a stream, @downstream gets a reference to
 * it (the element then runs on it and proposes it upstream, as upstream's CUDA elements do);
 * otherwise the pool gets @ours and @downstream NULL. */
bool decide_allocation (GstObject *element, GstCudaContext *context, GstQuery *query, guint held, bool pinned,
    GstCudaStream *ours,
    GstCudaStream **downstream);

/* propose_allocation and decide_allocation for the element whose @route it is: its context, and
 * on the CUDA backend (page-locked system memory) its stream, which travels upstream with the
 * pool (1.24+, cuvsync.h), or downstream's, which the element then runs on
 * (Route::set_downstream_stream). Unless @passthrough, the element offers to follow its writer on
 * the GPU (1.22: cuvsync.h, offer_to_follow_writers); whether its own consumer does
 * (Route::consumer_follows) decide_allocation notes, or in place, where GStreamer decides no
 * allocation and @query was @forwarded downstream first, this. */
bool propose_allocation (Route &route, GstQuery *query, guint held, bool passthrough, bool forwarded);
bool decide_allocation (GstObject *element, Route &route, GstQuery *query);

/* The base class's transform_caps: the same caps in CUDA memory first, then in system memory
 * (CUDA memory only where @cuda_possible); the operation keeps format and size. With
 * @keeps_caps: the very same caps first (the frame passes through in place), then in the other
 * memory, written out of place where the neighbour takes only that one (an analyser last before
 * a system-memory element downloads the frame itself, and the CUDA element before it need not).
 * Intersected with @filter, where given. */
GstCaps *transform_caps (GstCaps *caps, GstCaps *filter, bool cuda_possible, bool keeps_caps);

/* The base class's fixate_caps of its output (@othercaps, taken; a new reference back):
 * GstBaseTransform fixates in downstream's order, and cudadownload, like most elements that take
 * either memory, lists system memory first: the CUDA backend (@use_cuda) writes CUDA memory where
 * downstream takes both (no download in the element, and downstream's CUDA element reads the
 * frame where it is), the CPU backend system memory; with @keeps_caps the input's memory first. */
GstCaps *output_order (GstCaps *caps, GstCaps *othercaps, bool keeps_caps, bool use_cuda);

/* An element's sink and src templates: @cuda_formats in CUDA memory first, then @system_formats
 * in system memory. */
void add_pad_templates (GstElementClass *klass, const gchar *cuda_formats, const gchar *system_formats);

}  // namespace cuv
