/* gst-cudavision: our private metas in the ALLOCATION query. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Between two elements of ours the reader says in the ALLOCATION query, as an allocation meta
 * API, what it does with our buffers (propose_allocation), and the writer finds that in
 * downstream's answer (decide_allocation): the stream meta (common/cuda/cuvstreammeta.h, 1.22)
 * and the results that follow the frame (common/results/cuvresultsmeta.h). A tee keeps only what
 * every branch says (docs/design.md, "Synchronisation"). */
#pragma once

#include <gst/gst.h>

namespace cuv {

/* Whether @query (ALLOCATION, answered downstream) holds the meta API @api. */
inline bool
query_has_meta (GstQuery *query, GType api)
{
  return gst_query_find_allocation_meta (query, api, nullptr);
}

/* Says @api in @query, once. */
inline void
query_add_meta (GstQuery *query, GType api)
{
  if (!query_has_meta (query, api))
    gst_query_add_allocation_meta (query, api, nullptr);
}

}  // namespace cuv
