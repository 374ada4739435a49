/* gst-cudavision: GstCudaVisionFilter's renegotiation while frames flow (docs/design.md,
 * "Renegotiation"). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

namespace cuv {

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

bool caps_result_empty (GstQuery *query, GstPadDirection direction);

}  // namespace cuv
