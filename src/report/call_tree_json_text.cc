#include "src/report/call_tree_json_text.h"

#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/model/json_text.h"
#include "src/report/call_tree_text.h"
#include "src/report/printed_json_string.h"
#include "src/report/spilled_text.h"

namespace ptprof {

namespace {

class JsonTreeWriter {
 public:
  explicit JsonTreeWriter(SpilledText& out) : spilled_(out), out_(out.text()) {}

  // The members in the printer's order (sorted): children, entries, name, self_insns, self_ns,
  // total_insns, total_ns; the children heaviest first, as CallTreeJson orders them.
  void Node(const CallTreeNode& node, size_t indent) {
    out_ += "{\n";
    Indent(indent + 1);
    out_ += "\"children\": ";
    if (node.children.empty()) {
      out_ += "[]";
    } else {
      const size_t first = PushChildrenByWeight(node, TreeWeight::kInsns, order_);
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
    spilled_.Spill();
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

  SpilledText& spilled_;
  std::string& out_;  // spilled_'s text
  std::vector<const CallTreeNode*> order_;  // the children by weight, one level after another
};

// Throws what the printer throws for a name below `node` (or its own) that is not UTF-8, before
// anything is written.
void CheckNames(const CallTreeNode& node) {
  CheckPrintable(node.name);
  for (const CallTreeNode* child : node.children) CheckNames(*child);
}

}  // namespace

void WriteJsonWithTree(const nlohmann::json& document, const std::string& member,
                       const CallTreeNode& node, std::FILE* file) {
  CheckNames(node);
  // The document's own text ends with its last member, null: "\"member\": null\n}".
  SpilledText out(file);
  std::string& text = out.text();
  text = document.dump(1);
  const std::string value = "null\n}";
  const std::string tail = "\"" + member + "\": " + value;
  if (!text.ends_with(tail))
    throw std::logic_error("WriteJsonWithTree: '" + member + "' is not the document's last member");
  text.resize(text.size() - value.size());
  JsonTreeWriter(out).Node(node, 1);  // a member of the top object: one level of indent
  text += "\n}\n";
  out.Flush();
}

}  // namespace ptprof
