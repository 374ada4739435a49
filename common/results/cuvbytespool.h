/* gst-cudavision: host blocks for results that leave an element as GBytes without a copy. The
 * element computes a frame's result into a block (on the CPU, or the device copies it there: the
 * blocks of a pool made with a context are page-locked), and wrap () hands the block downstream in
 * a GBytes that gives it back when its last reference goes, which may be after the element has
 * stopped: the pool lives while a block is out. At most @max_out blocks are out at once (a
 * downstream queue may hold many buffers); past that acquire () gives none and the element copies
 * its result into a new GBytes instead. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/base/cuvcuda.h"

namespace cuv {

class BytesPool : public std::enable_shared_from_this<BytesPool> {
 public:
  struct Block;

  /* Blocks of @size bytes, page-locked memory of @ctx where a context is given (CUDA builds),
   * else plain memory. */
  static std::shared_ptr<BytesPool> make (GstCudaContext *ctx, size_t size, unsigned max_out);
  BytesPool (GstCudaContext *ctx, size_t size, unsigned max_out);
  ~BytesPool ();
  BytesPool (const BytesPool &) = delete;
  BytesPool &operator= (const BytesPool &) = delete;

  size_t block_size () const { return size_; }
  /* A block for one frame into @block: a free one, or a new one while fewer than max_out are out;
   * NULL when max_out are out. False when a new block's memory could not be had (@block NULL). */
  bool acquire (Block **block);
  static uint8_t *data (Block *b);
  /* The first @size bytes of @b in a GBytes, which owns the block from now on. */
  static GBytes *wrap (Block *b, size_t size);
  /* Back to its pool, a block that was not wrapped. */
  static void give_back (Block *b);

 private:
  void put (Block *b);

  GstCudaContext *ctx_ = nullptr;
  size_t size_;
  unsigned max_out_;
  std::mutex lock_;
  std::vector<std::unique_ptr<Block>> free_;
  unsigned out_ = 0;
};

/* One frame's block, which its results value (cuvframeresults.h) holds until the frame's meta
 * takes it: given back where no meta did (the frame dropped, or the value reused). */
class BytesBlock {
 public:
  BytesBlock () = default;
  ~BytesBlock () { reset (); }
  BytesBlock (const BytesBlock &) = delete;
  BytesBlock &operator= (const BytesBlock &) = delete;

  /* The frame's first @size bytes (at @data) as a GBytes: the block itself, or a copy of @data
   * where the frame has no block. */
  GBytes *take (const void *data, size_t size);
  /* Gives the block back to its pool. */
  void reset ();

 private:
  friend class BytesTarget;
  BytesPool::Block *block_ = nullptr;
};

/* The blocks of an element's frames, from a pool of its own: each frame's handed to its meta
 * without a copy (or copied while all of the pool's blocks are downstream). */
class BytesTarget {
 public:
  BytesTarget () = default;
  BytesTarget (const BytesTarget &) = delete;
  BytesTarget &operator= (const BytesTarget &) = delete;

  /* A frame's block of @size bytes into @into (page-locked memory of @ctx, or plain memory without
   * one; the pool is made again when @size changes), giving back the block @into held; @fallback
   * while @max_out blocks are downstream. NULL when a block's memory could not be had. */
  uint8_t *acquire (GstCudaContext *ctx, size_t size, unsigned max_out, uint8_t *fallback, BytesBlock *into);
  /* Drops the pool (caps change, stop); blocks still held by frames or in metas downstream go
   * back to the old pool, which lives until the last one does. */
  void release () { pool_.reset (); }
  size_t block_size () const { return pool_ ? pool_->block_size () : 0; }

 private:
  std::shared_ptr<BytesPool> pool_;
};

}  // namespace cuv
