/* cudavision-run: which bus messages are an analyser's results (docs/results.md). An analyser is
 * an element whose type derives from GstCudaVisionAnalyser, the base class that alone posts the
 * results messages (common/element/gstcudavisionanalyser.h): the runner knows no element by name, so a
 * new analyser's results reach MQTT as they are (docs/adding-an-element.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

namespace cuvrun {

/* The analysers' base type's name; the type is registered once the plugin is loaded. */
constexpr const char *kAnalyserTypeName = "GstCudaVisionAnalyser";

/* Whether @element is an analyser (its type derives from kAnalyserTypeName). */
bool is_analyser (GstObject *element);

/* Whether @m is an analyser's results: an element message that an analyser posted. */
bool is_result (GstMessage *m);

}  // namespace cuvrun
