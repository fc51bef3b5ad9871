#include "src/report/call_tree_json_text.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/model/json_text.h"
#include "src/report/call_tree_text.h"
#include "src/report/printed_json_string.h"

namespace ptprof {

namespace {

class JsonTreeWriter {
 public:
  JsonTreeWriter(std::string& out, std::FILE* file) : out_(out), file_(file) {}

  // The members in the printer's order (sorted): children, entries, name, self_insns, self_ns,
  // total_insns, total_ns; the children heaviest first, as CallTreeJson orders them.
  void Node(const CallTreeNode& node, size_t indent) {
    out_ += "{\n";
    Indent(indent + 1);
    out_ += "\"children\": ";
    if (node.children.empty()) {
      out_ += "[]";
    } else {
      const size_t first = order_.size();
      for (const CallTreeNode* child : node.children) order_.push_back(child);
      std::stable_sort(order_.begin() + static_cast<std::ptrdiff_t>(first), order_.end(),
                       [](const CallTreeNode* a, const CallTreeNode* b) {
                         return a->total_insns > b->total_insns;
                       });
      const size_t last = order_.size();
      out_ += "[\n";
      for (size_t i = first; i < last; ++i) {
        Indent(indent + 2);
        Node(*order_[i], indent + 2);
        out_ += i + 1 < last ? ",\n" : "\n";
      }
      order_.resize(first);
      Indent(indent + 1);
      out_ += ']';
    }
    Member(indent, "entries", node.entries);
    out_ += ",\n";
    Indent(indent + 1);
    out_ += "\"name\": ";
    AppendPrintedString(out_, node.name, BadUtf8::kThrow);
    Member(indent, "self_insns", node.self_insns);
    Member(indent, "self_ns", node.self_ns);
    Member(indent, "total_insns", node.total_insns);
    Member(indent, "total_ns", node.total_ns);
    out_ += '\n';
    Indent(indent);
    out_ += '}';
    if (file_ && out_.size() >= (size_t{1} << 20)) Flush();
  }

  void Flush() {
    if (!file_ || out_.empty()) return;
    std::fwrite(out_.data(), 1, out_.size(), file_);
    out_.clear();
  }

 private:
  void Indent(size_t n) { out_.append(n, ' '); }
  // ",\n", the indent, "\"key\": " and the value.
  void Member(size_t indent, const char* key, uint64_t value) {
    out_ += ",\n";
    Indent(indent + 1);
    out_ += '"';
    out_ += key;
    out_ += "\": ";
    AppendDecimal(out_, value);
  }

  std::string& out_;
  std::FILE* file_;
  std::vector<const CallTreeNode*> order_;  // the children by weight, one level after another
};

// Throws what the printer throws for a name below `node` (or its own) that is not UTF-8, before
// anything is written. Only names with bytes past ASCII are printed to find out.
void CheckNames(const CallTreeNode& node) {
  for (unsigned char c : node.name) {
    if (c >= 0x80) {
      (void)nlohmann::json(node.name).dump();
      break;
    }
  }
  for (const CallTreeNode* child : node.children) CheckNames(*child);
}

}  // namespace

void AppendCallTreeJson(const CallTreeNode& node, int depth, std::string& out, std::FILE* file) {
  JsonTreeWriter writer(out, file);
  writer.Node(node, static_cast<size_t>(std::max(depth, 0)));
  writer.Flush();
}

void WriteJsonWithTree(const nlohmann::json& document, const std::string& member,
                       const CallTreeNode& node, std::FILE* file) {
  CheckNames(node);
  // The document's own text ends with its last member, null: "\"member\": null\n}".
  std::string out = document.dump(1);
  const std::string tail = "\"" + member + "\": null\n}";
  if (out.size() < tail.size() || out.compare(out.size() - tail.size(), tail.size(), tail) != 0)
    throw std::logic_error("WriteJsonWithTree: '" + member + "' is not the document's last member");
  out.resize(out.size() - 6);  // "null\n}"
  AppendCallTreeJson(node, 1, out, file);
  out += "\n}\n";
  std::fwrite(out.data(), 1, out.size(), file);
}

}  // namespace ptprof
