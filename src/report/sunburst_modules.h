#pragma once
// SunburstModules answers "which module is this node's code in, as the page numbers them?": each
// module name is stored once in the sunburst's data ("modules") and a node names it by its index
// ("m"), numbered in the order nodes first name them. Shared by the page's document
// (sunburst_html.cc) and its text (sunburst_data_text.cc), which must number alike.
#include <map>
#include <string>
#include <vector>

#include "src/report/sunburst_html.h"

namespace ptprof {

class SunburstModules {
 public:
  explicit SunburstModules(const SunburstHtmlOptions& options) : options_(options) {}

  // The index of `node`'s module, numbered now if it is new; -1 when its module is not known.
  long IndexOf(const CallTreeNode& node) {
    if (!options_.module_of) return -1;
    std::string module = options_.module_of(node);
    if (module.empty()) return -1;
    auto [it, added] = index_.emplace(std::move(module), names_.size());
    if (added) names_.push_back(it->first);
    return static_cast<long>(it->second);
  }
  const std::vector<std::string>& names() const { return names_; }

 private:
  const SunburstHtmlOptions& options_;
  std::map<std::string, size_t> index_;
  std::vector<std::string> names_;
};

}  // namespace ptprof
