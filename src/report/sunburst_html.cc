#include "src/report/sunburst_html.h"

#include "src/report/sunburst_data_text.h"
#include "src/report/sunburst_html_assets.h"
#include "src/report/sunburst_modules.h"

namespace ptprof {

namespace {

// A node's module index (-1: none) as its "m".
void Tag(long module, nlohmann::json& out) {
  if (module >= 0) out["m"] = static_cast<size_t>(module);
}

nlohmann::json TreeNode(const CallTreeNode& node, SunburstModules& modules) {
  nlohmann::json out = {{"n", node.name}, {"i", node.total_insns}, {"t", node.total_ns},
                        {"si", node.self_insns}, {"st", node.self_ns}, {"e", node.entries}};
  if (node.parent) Tag(modules.IndexOf(node), out);
  if (!node.children.empty()) {
    nlohmann::json children = nlohmann::json::array();
    for (const auto& child : node.children) children.push_back(TreeNode(*child, modules));
    out["c"] = std::move(children);
  }
  return out;
}

nlohmann::json Side(const CallTreeNode* node) {
  if (!node) return nullptr;
  return nlohmann::json::array({node->total_insns, node->total_ns, node->entries, node->self_insns,
                                node->self_ns});
}

// The union of the children of `a` and `b` (either may be null), A's order first.
nlohmann::json UnionNode(const std::string& name, const CallTreeNode* a, const CallTreeNode* b,
                         SunburstModules& modules) {
  nlohmann::json out = {{"n", name}, {"a", Side(a)}, {"b", Side(b)}};
  const CallTreeNode& either = b ? *b : *a;
  if (either.parent) Tag(modules.IndexOf(either), out);
  std::vector<std::string> names;
  if (a) for (const auto& child : a->children) names.push_back(child->name);
  if (b)
    for (const auto& child : b->children)
      if (!a || !a->FindChild(child->name)) names.push_back(child->name);
  if (!names.empty()) {
    nlohmann::json children = nlohmann::json::array();
    for (const std::string& child : names)
      children.push_back(UnionNode(child, a ? a->FindChild(child) : nullptr,
                                   b ? b->FindChild(child) : nullptr, modules));
    out["c"] = std::move(children);
  }
  return out;
}

// The data's JSON text made safe to sit inside a <script> element: "</" would end it early.
std::string ScriptSafe(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 64);
  size_t from = 0;
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2)) {
    out.append(text, from, at - from);
    out += "<\\/";
    from = at + 2;
  }
  out.append(text, from, std::string::npos);
  return out;
}

std::string HtmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// `data`: the JSON text of SunburstData or SunburstDiffData.
std::string Page(const std::string& title, const std::string& data) {
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"generator\" content=\"ptprof stacks\">\n";
  html += "<link rel=\"icon\" href=\"data:,\">\n";
  html += "<title>" + HtmlEscape(title) + "</title>\n<style>\n";
  html += kSunburstCss;
  html += "</style>\n</head>\n<body>\n";
  html += kSunburstBody;
  html += "<script type=\"application/json\" id=\"stacks-data\">";
  html += ScriptSafe(data);
  html += "</script>\n<script>\n";
  html += kSunburstScript;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace

nlohmann::json SunburstData(const CallTree& tree, const SunburstHtmlOptions& options) {
  SunburstModules modules(options);
  nlohmann::json root = TreeNode(tree.root(), modules);
  return {{"mode", "tree"},
          {"title", options.title},
          {"subtitle", options.subtitle},
          {"weight", TreeWeightName(options.weight)},
          {"total_insns", tree.root().total_insns},
          {"total_ns", tree.root().total_ns},
          {"modules", modules.names()},
          {"root", std::move(root)}};
}

nlohmann::json SunburstDiffData(const CallTree& a, const std::string& a_name, const CallTree& b,
                                const std::string& b_name, const SunburstHtmlOptions& options) {
  SunburstModules modules(options);
  nlohmann::json root = UnionNode("", &a.root(), &b.root(), modules);
  return {{"mode", "diff"},
          {"title", options.title},
          {"subtitle", options.subtitle},
          {"weight", TreeWeightName(options.weight)},
          {"threshold", options.changed_threshold},
          {"a", {{"input", a_name}, {"total_insns", a.root().total_insns}, {"total_ns", a.root().total_ns}}},
          {"b", {{"input", b_name}, {"total_insns", b.root().total_insns}, {"total_ns", b.root().total_ns}}},
          {"modules", modules.names()},
          {"root", std::move(root)}};
}

std::string SunburstHtml(const CallTree& tree, const SunburstHtmlOptions& options) {
  return Page(options.title, SunburstDataText(tree, options));
}

std::string SunburstDiffHtml(const CallTree& a, const std::string& a_name, const CallTree& b,
                             const std::string& b_name, const SunburstHtmlOptions& options) {
  return Page(options.title, SunburstDiffData(a, a_name, b, b_name, options)
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace ptprof
