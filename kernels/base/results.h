/* gst-cudavision: where a kernel's per-frame results go, with no copy queued after it.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The kernel's blocks add their results into @accum (device memory) with atomics. The block
 * that ends last (results.cuh) finishes them into @out, page-locked host memory that the GPU
 * writes through its mapping (any cudaMallocHost memory under unified addressing), and into
 * @device_out where a later kernel on the stream reads them (may be null); then it sets @accum
 * and @ticket back to zero for the next launch. So the host reads @out once it has waited for the
 * stream, and neither a copy nor a memset is queued per frame. @accum and @ticket must be zero
 * before the first launch; launches that share them must be ordered (one stream). */
#pragma once

namespace cuv {

template <typename Accum, typename Out> struct ResultsTo {
  Accum *accum;
  unsigned int *ticket;
  Out *out;
  Out *device_out;
};

}  // namespace cuv
