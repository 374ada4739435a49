/* gst-cudavision: the last block of a grid finishes the grid's results (results.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "kernels/base/results.h"

namespace cuv {

/* Every thread of every block calls it once its block's atomics into the accumulator are issued:
 * true, in every thread, in the one block that ends last, which then sees the other blocks'
 * atomics. As cooperative groups' grid sync orders a block's writes: the barrier, then one
 * thread's fence before its ticket (fences are cumulative) and after it, then the barrier again;
 * the block's other warps do not wait for their atomics to land. */
__device__ __forceinline__ bool ends_last (unsigned int *ticket)
{
  __shared__ bool last;
  __syncthreads ();
  if ((threadIdx.x | threadIdx.y | threadIdx.z) == 0) {
    __threadfence ();
    last = atomicAdd (ticket, 1u) == gridDim.x * gridDim.y * gridDim.z - 1;
    if (last)
      __threadfence ();
  }
  __syncthreads ();
  return last;
}

/* The ticket back to zero for the next launch: in the last block, by one thread, once every
 * block has taken its ticket. */
__device__ __forceinline__ void rearm (unsigned int *ticket)
{
  if ((threadIdx.x | threadIdx.y | threadIdx.z) == 0)
    *ticket = 0;
}

}  // namespace cuv
