/* gst-cudavision: resident_blocks (resident.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "resident.h"

#include <map>
#include <mutex>
#include <tuple>

namespace cuv {

cudaError_t resident_blocks (const void *kernel, int threads, int *blocks)
{
  static std::mutex lock;
  static std::map<std::tuple<int, const void *, int>, int> known;
  int device = 0;
  cudaError_t err = cudaGetDevice (&device);
  if (err != cudaSuccess)
    return err;
  const auto key = std::make_tuple (device, kernel, threads);
  {
    std::lock_guard<std::mutex> lk (lock);
    auto it = known.find (key);
    if (it != known.end ()) {
      *blocks = it->second;
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
  std::lock_guard<std::mutex> lk (lock);
  known[key] = *blocks;
  return cudaSuccess;
}

}  // namespace cuv
