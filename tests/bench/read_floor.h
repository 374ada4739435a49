/* gst-cudavision benchmark: a pure read of a frame, the floor of the analysis kernels.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

/* Reads @bytes (a multiple of 16) at @data (16-byte aligned) once; writes @sink only if the data
 * hold a magic word. */
cudaError_t read_floor_cuda (const void *data, size_t bytes, uint32_t *sink, cudaStream_t stream);
