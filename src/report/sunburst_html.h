#pragma once
// SunburstHtml answers "what does this call tree look like?" as one self-contained HTML file (inline
// CSS, script and data; it fetches nothing): an interactive sunburst with one ring per call depth,
// the angle of a slice its share of instructions (or of time, toggled in the page), colours per
// function with kernel and user code in different hues, a tooltip with the name, full path,
// instructions, time, entries and shares, click to zoom into a node and on the centre to zoom out,
// a breadcrumb and a legend. SunburstDiffHtml draws the union of two trees the same way, marking
// paths only in B, only in A, and paths whose share changed.
#include <functional>
#include <string>

#include "src/analyses/support/call_tree.h"
#include "src/report/call_tree_text.h"

namespace ptprof {

struct SunburstHtmlOptions {
  std::string title;     // e.g. "ptprof stacks traces/lab/syscalls-nop.ptar"
  std::string subtitle;  // e.g. what was selected; the page adds the totals
  TreeWeight weight = TreeWeight::kInsns;  // the angle when the page opens
  // Where a node's code lives: "kernel" (drawn in warm hues), a module name or "user" (cool hues);
  // empty when unknown. May be null.
  std::function<std::string(const CallTreeNode&)> module_of;
  double changed_threshold = 0.01;  // diff: a share change (0..1) at or above this is "changed"
};

std::string SunburstHtml(const CallTree& tree, const SunburstHtmlOptions& options);

// `a` is the baseline, `b` the run compared with it; both finalized.
std::string SunburstDiffHtml(const CallTree& a, const std::string& a_name, const CallTree& b,
                             const std::string& b_name, const SunburstHtmlOptions& options);

// The JSON the page embeds (what the functions above put between the <script> tags), for tests
// and for `--format json` consumers who want the same shape.
nlohmann::json SunburstData(const CallTree& tree, const SunburstHtmlOptions& options);
nlohmann::json SunburstDiffData(const CallTree& a, const std::string& a_name, const CallTree& b,
                                const std::string& b_name, const SunburstHtmlOptions& options);

}  // namespace ptprof
