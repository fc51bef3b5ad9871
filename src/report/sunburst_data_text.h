#pragma once
// SunburstDataText answers "the data a call tree's sunburst page embeds, as text" without first
// building it as a JSON document: the page of a compiler's call tree (300 K nodes) spent about
// 1.5 s making and printing that document, one map and several allocations per node, against
// 0.7 s for the whole decode and call tree on two threads. The text is, byte for byte, what
// SunburstData(tree, options).dump(-1, ' ', false, replace) gives (src/report/sunburst_html.h);
// strings that are not plain printable ASCII go through that same printer one at a time.
#include <string>

#include "src/analyses/support/call_tree.h"
#include "src/report/sunburst_html.h"

namespace ptprof {

std::string SunburstDataText(const CallTree& tree, const SunburstHtmlOptions& options);

}  // namespace ptprof
