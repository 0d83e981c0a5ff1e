// A read-only view of an ONNX GraphProto on its serialized bytes: nodes, who produces and who
// reads each tensor, and the values of small constants. For the protobuf-level rewrites.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "optimize/protobuf_wire.h"

namespace sam3::optimize::onnx {

struct Node {
  const wire::Field* field = nullptr;  // the graph's field holding this NodeProto
  std::string op, domain;              // domain "" for the default ONNX domain
  std::vector<std::string> inputs, outputs;
  std::vector<wire::Field> attributes;  // AttributeProto messages
};

// What a TensorProto says about itself, without its values.
struct TensorHeader {
  int data_type = 0;
  std::vector<std::int64_t> dims;
  bool external = false;  // values in an external data file
  std::int64_t elements() const;
};
TensorHeader tensor_header(std::string_view tensor);

bool is_op(const Node* n, std::string_view op);  // in the default domain
std::optional<std::int64_t> int_attribute(const Node& n, std::string_view name);
std::vector<std::int64_t> ints_attribute(const Node& n, std::string_view name);

// The model's default-domain opset version; sets *has_microsoft when com.microsoft is imported.
int default_opset(const std::vector<wire::Field>& model, bool* has_microsoft);

class GraphView {
 public:
  // `fields`: the parsed GraphProto; they, and the bytes they point into, must outlive the view.
  explicit GraphView(const std::vector<wire::Field>& fields);

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node* node_of(const wire::Field& f) const;
  const Node* producer(const std::string& tensor) const;
  int index(const Node* n) const { return static_cast<int>(n - nodes_.data()); }
  // Node indices that read `tensor`; a graph output counts as an outside reader (-1).
  std::vector<int> readers(const std::string& tensor) const;
  bool only_reader(const std::string& tensor, const Node* reader) const;
  // Whether any tensor name starts with `prefix`.
  bool name_taken(std::string_view prefix) const;
  // A prefix no tensor name starts with: `base` itself when free, else `base` + a number + "_".
  // Linear in the length of the names that start with `base`, whatever a file names its tensors.
  std::string unused_prefix(std::string_view base) const;

  // Values of one-element constants (initializers that are not graph inputs, Constant nodes).
  std::optional<float> scalar_constant(const std::string& tensor) const;
  std::optional<std::int64_t> int64_constant(const std::string& tensor) const;
  // The TensorProto of an initializer (not overridable as a graph input) or a Constant node.
  std::optional<std::string_view> constant_tensor(const std::string& tensor) const;

 private:
  void read_initializer(std::string_view tensor);
  void read_value_info(const wire::Field& f);

  std::vector<Node> nodes_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, int> producer_;
  std::map<const wire::Field*, int> by_field_;
  std::map<std::string, std::string_view> initializers_;
  std::set<std::string> graph_inputs_, graph_outputs_, names_;
};

}  // namespace sam3::optimize::onnx
