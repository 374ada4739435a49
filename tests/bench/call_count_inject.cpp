/* A CUDA injection library that counts a process's CUDA API calls by name, for bench_pipelines
 * --count-calls (call_count.h). The driver loads it at cuInit when CUDA_INJECTION64_PATH names
 * it, and calls InitializeInjection; it subscribes to CUPTI's callbacks for the driver API (every
 * call the driver takes, the runtime's own included) and the runtime API, and adds one to the
 * call's counter on entry. CUPTI is opened at run time (libcupti is the toolkit's, not the driver's,
 * and is not linked), from the library path or the toolkit's usual places.
 * The counts cost a callback a call: they count, they do not time.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::atomic<uint64_t> g_driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
std::atomic<uint64_t> g_runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];

using GetCallbackName = CUptiResult (*) (CUpti_CallbackDomain, uint32_t, const char **);
GetCallbackName g_name;

void CUPTIAPI on_call (void *, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
  if (static_cast<const CUpti_CallbackData *> (data)->callbackSite != CUPTI_API_ENTER)
    return;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
    g_driver[cbid].fetch_add (1, std::memory_order_relaxed);
  else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
    g_runtime[cbid].fetch_add (1, std::memory_order_relaxed);
}

void *open_cupti ()
{
  std::string dirs[] = {"", "/extras/CUPTI/lib64/", "/lib64/", "/lib/", "/targets/x86_64-linux/lib/",
      "/targets/sbsa-linux/lib/"};
  const char *env = std::getenv ("CUDA_PATH");
  const std::string root = env ? env : "/usr/local/cuda";
  for (const std::string &dir : dirs)
    for (const char *name : {"libcupti.so", "libcupti.so.13"})
      if (void *h = dlopen ((dir.empty () ? std::string (name) : root + dir + name).c_str (), RTLD_NOW))
        return h;
  return nullptr;
}

}  // namespace

extern "C" __attribute__ ((visibility ("default"))) int InitializeInjection ()
{
  void *cupti = open_cupti ();
  auto subscribe = cupti ? reinterpret_cast<decltype (&cuptiSubscribe)> (dlsym (cupti, "cuptiSubscribe")) : nullptr;
  auto enable = cupti ? reinterpret_cast<decltype (&cuptiEnableDomain)> (dlsym (cupti, "cuptiEnableDomain")) : nullptr;
  g_name = cupti ? reinterpret_cast<GetCallbackName> (dlsym (cupti, "cuptiGetCallbackName")) : nullptr;
  CUpti_SubscriberHandle subscriber;
  if (!subscribe || !enable || !g_name || subscribe (&subscriber, on_call, nullptr) != CUPTI_SUCCESS ||
      enable (1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS ||
      enable (1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS) {
    std::fprintf (stderr, "call count: CUPTI not found or refused (set CUDA_PATH to the toolkit)\n");
    return 0;
  }
  return 1;
}

/* The counts so far: @runtime 0 the driver API's, 1 the runtime's, into @counts (@n of them,
 * indexed by CUPTI's callback id); returns how many ids the domain has. */
extern "C" __attribute__ ((visibility ("default"))) size_t cuv_call_counts (int runtime, uint64_t *counts, size_t n)
{
  const size_t size = runtime ? size_t (CUPTI_RUNTIME_TRACE_CBID_SIZE) : size_t (CUPTI_DRIVER_TRACE_CBID_SIZE);
  for (size_t i = 0; i < n && i < size; i++)
    counts[i] = (runtime ? g_runtime : g_driver)[i].load (std::memory_order_relaxed);
  return size;
}

/* The name of callback id @cbid of the driver API (@runtime 0) or the runtime's. */
extern "C" __attribute__ ((visibility ("default"))) const char *cuv_call_name (int runtime, size_t cbid)
{
  const char *name = nullptr;
  if (!g_name || g_name (runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
          static_cast<uint32_t> (cbid), &name) != CUPTI_SUCCESS)
    return "?";
  return name;
}
