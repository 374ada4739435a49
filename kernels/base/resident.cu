/* gst-cudavision: resident_blocks (resident.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/base/resident.h"

#include <map>
#include <mutex>
#include <tuple>

namespace cuv {

cudaError_t resident_blocks (const void *kernel, int threads, int *blocks)
{
  using Key = std::tuple<int, const void *, int>;
  /* every launch asks: a streaming thread finds its answer in its own copy, and takes the
   * process-wide lock only the first time it asks for a kernel on a device */
  static std::mutex lock;
  static std::map<Key, int> known;
  thread_local std::map<Key, int> mine;
  int device = 0;
  cudaError_t err = cudaGetDevice (&device);
  if (err != cudaSuccess)
    return err;
  const Key key = std::make_tuple (device, kernel, threads);
  auto at = mine.find (key);
  if (at != mine.end ()) {
    *blocks = at->second;
    return cudaSuccess;
  }
  {
    std::lock_guard<std::mutex> lk (lock);
    auto it = known.find (key);
    if (it != known.end ()) {
      *blocks = mine[key] = it->second;
      return cudaSuccess;
    }
  }
  int sms = 0, per_sm = 0;
  err = cudaDeviceGetAttribute (&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess)
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, kernel, threads, 0);
  if (err != cudaSuccess)
    return err;
  *blocks = sms * per_sm > 0 ? sms * per_sm : 1;
  mine[key] = *blocks;
  std::lock_guard<std::mutex> lk (lock);
  known[key] = *blocks;
  return cudaSuccess;
}

}  // namespace cuv
