#include "src/report/sunburst_data_text.h"

#include <string_view>
#include <vector>

#include "src/model/json_text.h"
#include "src/report/printed_json_string.h"
#include "src/report/sunburst_modules.h"

namespace ptprof {

namespace {

// The document's members in the order its printer writes them (its objects' keys sorted), each
// node an object {"c":[children],"e","i","m","n","si","st","t"}: "c" only with children, "m"
// (the node's module, numbered as first met, parent before children) only where known.
class Writer {
 public:
  explicit Writer(const SunburstHtmlOptions& options) : modules_(options) {}

  void Node(const CallTreeNode& node, std::string& out) {
    // Numbered before the children, as the document numbers them.
    const long module = node.parent ? modules_.IndexOf(node) : -1;
    out += '{';
    if (!node.children.empty()) {
      out += "\"c\":[";
      bool first = true;
      for (const CallTreeNode* child : node.children) {
        if (!first) out += ',';
        first = false;
        Node(*child, out);
      }
      out += "],";
    }
    Number(out, "\"e\":", node.entries);
    Number(out, ",\"i\":", node.total_insns);
    if (module >= 0) Number(out, ",\"m\":", static_cast<uint64_t>(module));
    out += ",\"n\":";
    AppendPrintedString(out, node.name, BadUtf8::kReplace);
    Number(out, ",\"si\":", node.self_insns);
    Number(out, ",\"st\":", node.self_ns);
    Number(out, ",\"t\":", node.total_ns);
    out += '}';
  }

  const std::vector<std::string>& modules() const { return modules_.names(); }

 private:
  static void Number(std::string& out, const char* key, uint64_t value) {
    out += key;
    AppendDecimal(out, value);
  }

  SunburstModules modules_;
};

}  // namespace

std::string SunburstDataText(const CallTree& tree, const SunburstHtmlOptions& options) {
  Writer writer(options);
  std::string root;
  writer.Node(tree.root(), root);  // first: it numbers the modules listed before it
  std::string out;
  out.reserve(root.size() + 4096);
  out += "{\"mode\":\"tree\",\"modules\":[";
  for (size_t i = 0; i < writer.modules().size(); ++i) {
    if (i) out += ',';
    AppendPrintedString(out, writer.modules()[i], BadUtf8::kReplace);
  }
  out += "],\"root\":";
  out += root;
  out += ",\"subtitle\":";
  AppendPrintedString(out, options.subtitle, BadUtf8::kReplace);
  out += ",\"title\":";
  AppendPrintedString(out, options.title, BadUtf8::kReplace);
  out += ",\"total_insns\":";
  AppendDecimal(out, tree.root().total_insns);
  out += ",\"total_ns\":";
  AppendDecimal(out, tree.root().total_ns);
  out += ",\"weight\":";
  AppendPrintedString(out, TreeWeightName(options.weight), BadUtf8::kReplace);
  out += '}';
  return out;
}

}  // namespace ptprof
