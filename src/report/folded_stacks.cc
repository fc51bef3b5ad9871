#include "src/report/folded_stacks.h"

#include "src/model/json_text.h"
#include "src/report/spilled_text.h"

namespace ptprof {

namespace {

// `name` as a frame: ';' (the separator) as ':', whitespace as '_', nothing as "[unknown]".
void AppendFrame(std::string& out, const std::string& name) {
  if (name.empty()) {
    out += "[unknown]";
    return;
  }
  const size_t from = out.size();
  out += name;
  for (size_t i = from; i < out.size(); ++i) {
    char& c = out[i];
    if (c == ';') c = ':';
    else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
  }
}

// The lines, made into one buffer that goes to `file` a megabyte at a time (with a file) or holds
// them all. The path from the root to the node at hand is kept in one string, each frame appended
// on the way down and cut off on the way back: a compiler's tree has 300 K paths, hundreds of
// frames deep, and its lines come to 400 MB.
class FoldedWriter {
 public:
  FoldedWriter(TreeWeight weight, std::FILE* file) : weight_(weight), out_(file) {}

  void Root(const CallTree& tree) {
    // Weight of the nameless root itself (instructions outside any known frame) has no path.
    if (uint64_t self = SelfWeight(tree.root(), weight_)) Line("[outside]", self);
    for (const CallTreeNode* child : tree.root().children) Node(*child);
  }

  std::string& out() { return out_.text(); }
  void Flush() { out_.Flush(); }

 private:
  void Node(const CallTreeNode& node) {
    const size_t before = path_.size();
    if (before) path_ += ';';
    AppendFrame(path_, node.name);
    if (uint64_t self = SelfWeight(node, weight_)) Line(path_, self);
    for (const CallTreeNode* child : node.children) Node(*child);
    path_.resize(before);
  }

  void Line(const std::string& path, uint64_t count) {
    std::string& out = out_.text();
    out += path;
    out += ' ';
    AppendDecimal(out, count);
    out += '\n';
    out_.Spill();
  }

  TreeWeight weight_;
  std::string path_;
  SpilledText out_;
};

}  // namespace

std::string FoldedStacks(const CallTree& tree, TreeWeight weight) {
  FoldedWriter writer(weight, nullptr);
  writer.Root(tree);
  return std::move(writer.out());
}

void WriteFoldedStacks(const CallTree& tree, TreeWeight weight, std::FILE* file) {
  FoldedWriter writer(weight, file);
  writer.Root(tree);
  writer.Flush();
}

}  // namespace ptprof
