/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/results/cuvbytespool.h"

namespace cuv {

/* A block out of the pool holds the pool; a free one does not (the pool holds it). */
struct BytesPool::Block {
  std::shared_ptr<BytesPool> pool;
  uint8_t *ptr = nullptr;
  std::vector<uint8_t> plain;
#if CUV_HAVE_CUDA
  CudaBuffer pinned;
#endif
};

std::shared_ptr<BytesPool> BytesPool::make (GstCudaContext *ctx, size_t size, unsigned max_out)
{
  return std::make_shared<BytesPool> (ctx, size, max_out);
}

BytesPool::BytesPool (GstCudaContext *ctx, size_t size, unsigned max_out) : size_ (size), max_out_ (max_out)
{
  if (ctx)
    ctx_ = static_cast<GstCudaContext *> (gst_object_ref (ctx));
}

BytesPool::~BytesPool ()
{
  free_.clear ();
  if (ctx_)
    gst_object_unref (ctx_);
}

bool BytesPool::acquire (Block **block)
{
  *block = nullptr;
  std::unique_ptr<Block> b;
  {
    std::lock_guard<std::mutex> lk (lock_);
    if (!free_.empty ()) {
      b = std::move (free_.back ());
      free_.pop_back ();
    } else if (out_ >= max_out_) {
      return true;
    }
    out_++;
  }
  if (!b) {
    b = std::make_unique<Block> ();
#if CUV_HAVE_CUDA
    if (ctx_) {
      if (b->pinned.allocate (ctx_, CudaBuffer::Kind::Pinned, size_) != cudaSuccess) {
        std::lock_guard<std::mutex> lk (lock_);
        out_--;
        return false;
      }
      b->ptr = b->pinned.data ();
    }
#endif
    if (!b->ptr) {
      b->plain.resize (size_);
      b->ptr = b->plain.data ();
    }
  }
  b->pool = shared_from_this ();
  *block = b.release ();
  return true;
}

uint8_t *BytesPool::data (Block *b)
{
  return b->ptr;
}

GBytes *BytesPool::wrap (Block *b, size_t size)
{
  return g_bytes_new_with_free_func (b->ptr, size, [] (gpointer p) { give_back (static_cast<Block *> (p)); }, b);
}

void BytesPool::give_back (Block *b)
{
  /* the block's reference may be the pool's last: it goes after the lock is released */
  std::shared_ptr<BytesPool> pool = std::move (b->pool);
  pool->put (b);
}

void BytesPool::put (Block *b)
{
  std::lock_guard<std::mutex> lk (lock_);
  free_.emplace_back (b);
  out_--;
}

uint8_t *BytesTarget::acquire (GstCudaContext *ctx, size_t size, unsigned max_out, uint8_t *fallback, BytesBlock *into)
{
  into->reset ();
  if (!pool_ || pool_->block_size () != size)
    pool_ = BytesPool::make (ctx, size, max_out);
  if (!pool_->acquire (&into->block_))
    return nullptr;
  return into->block_ ? BytesPool::data (into->block_) : fallback;
}

GBytes *BytesBlock::take (const void *data, size_t size)
{
  GBytes *bytes = block_ ? BytesPool::wrap (block_, size) : g_bytes_new (data, size);
  block_ = nullptr;
  return bytes;
}

void BytesBlock::reset ()
{
  if (block_)
    BytesPool::give_back (block_);
  block_ = nullptr;
}

}  // namespace cuv
