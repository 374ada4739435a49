/* gst-cudavision tests: the hooks that the plugin exports for tests (common/base/cuvcuda.cpp,
 * common/cuda/cuvsync.cpp), found in the loaded plugin.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gmodule.h>
#include <gst/gst.h>

namespace cuvtest {

/* The address of @name in the cudavision plugin (loaded by this call if it is not yet), NULL when
 * the plugin or the symbol is missing. */
inline gpointer plugin_symbol (const char *name)
{
  GstPlugin *plugin = gst_plugin_load_by_name ("cudavision");
  if (!plugin)
    return nullptr;
  /* the plugin is loaded: this only takes another reference to it, which the process keeps */
  GModule *module = g_module_open (gst_plugin_get_filename (plugin), G_MODULE_BIND_LAZY);
  gst_object_unref (plugin);
  gpointer symbol = nullptr;
  if (!module || !g_module_symbol (module, name, &symbol))
    return nullptr;
  return symbol;
}

/* Waits until the work the plugin does on threads of its own is done: page-locked memory freed
 * (cuvcuda.h: free_host_later), which holds CUDA contexts: before gst_deinit (), where the leaks
 * tracer counts what is alive. */
inline void finish_plugin_work ()
{
  for (const char *hook : {"cuv_finish_host_frees"})
    if (auto finish = reinterpret_cast<void (*) ()> (plugin_symbol (hook)))
      finish ();
}

}  // namespace cuvtest
