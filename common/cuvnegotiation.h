/* gst-cudavision: negotiation and allocation of GstCudaVisionFilter: which caps each pad offers
 * (CUDA memory first, then system memory), the error a refused format gets, and the buffer pools
 * proposed upstream and used for the output. The base class's GstBaseTransform vfuncs call these;
 * they call nothing back. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/video/video.h>

#include "common/cuvroute.h"
#include "common/cuvsync.h"

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

/* Renegotiation while frames flow (docs/design.md, "Renegotiation"): an element that can give
 * downstream either memory answers a change downstream itself, so that upstream, the source
 * included, renegotiates only when the element cannot.
 * - keep_reconfigure (the base class's src_event): a RECONFIGURE from downstream stays with a
 *   negotiated element (taken, and true: its source pad is marked, and the next frame
 *   renegotiates the output).
 * - install_renegotiation (class_init): before each frame the output is negotiated again where
 *   the pad is marked, with a second try where the first lost a race with the next caps change;
 *   and a frame whose output GstBaseTransform could not negotiate (it drops it) is submitted
 *   again after renegotiating, so that a temporal element still sees every frame.
 * - chain_surviving_refusals (the base class's chain function, around GstBaseTransform's
 *   @base_chain): a downstream refusal of the caps it had just taken (a
 *   capsfilter changed again between the query and the push) renegotiates, and the element
 *   loses the one it retries, with GstBaseTransform's "not negotiated" warning, and the stream
 *   goes on; one that renegotiation cannot mend (or several in a row) goes upstream with a
 *   RECONFIGURE, so that upstream retries as GStreamer's sources do.
 * - caps_result_empty: whether a sink caps query came back empty: a capsfilter that changes its
 *   caps while the query passes reads them twice, a moment apart, and answers nothing; the base
 *   asks once more. */
bool keep_reconfigure (GstBaseTransform *trans, GstEvent *event);
void install_renegotiation (GstBaseTransformClass *klass);
GstFlowReturn chain_surviving_refusals (GstPadChainFunction base_chain, GstPad *pad, GstObject *parent,
    GstBuffer *buffer);

/* An element's sink and src templates: @cuda_formats in CUDA memory first, then @system_formats
 * in system memory. */
void add_pad_templates (GstElementClass *klass, const gchar *cuda_formats, const gchar *system_formats);
bool caps_result_empty (GstQuery *query, GstPadDirection direction);

}  // namespace cuv
