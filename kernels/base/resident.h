/* gst-cudavision: how many blocks of a kernel stay resident on the current device, for kernels
 * whose grid holds only those (histogram.cu, difference.cuh).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cuda_runtime_api.h>

namespace cuv {

/* SMs x resident blocks per SM of @kernel with @threads threads and no dynamic shared memory, on
 * the current device. Computed once per device and kernel: the occupancy query costs microseconds
 * of host time, and a launch that waits for it leaves the GPU idle that long. Thread-safe; after
 * a thread's first question for a kernel on a device it takes no lock (the streaming path takes
 * no process-wide lock: docs/design.md, "A frame's lifetime"). */
cudaError_t resident_blocks (const void *kernel, int threads, int *blocks);

}  // namespace cuv
