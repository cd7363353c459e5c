#include "scheduler/planner/node_refusal.h"

#include <map>

namespace hsched::planner {

Status refuse_nodes(const Graph& graph, const std::string& opening,
                    const std::vector<NodeId>& offenders,
                    const std::function<const std::vector<Rejection>&(NodeId)>& rejections_of) {
  constexpr size_t kShownGroups = 8;
  constexpr size_t kNamesPerGroup = 3;
  constexpr size_t kDetailChars = 160;
  struct Group {
    std::string op;
    std::string reasons;  // "gpu0/fp16 op_unsupported, npu0/int8 ..."
    std::string detail;   // the first node's first rejection's detail
    std::vector<NodeId> nodes;
  };
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  for (NodeId n : offenders) {
    const std::vector<Rejection>& rejections = rejections_of(n);
    std::string reasons;
    for (size_t r = 0; r < rejections.size(); ++r) {
      reasons += (r ? ", " : "") + rejections[r].device + "/" +
                 precision_name(rejections[r].precision) + " " +
                 reason_code_name(rejections[r].reason);
    }
    if (rejections.empty()) reasons = "the policy lists no device";
    const std::string& op = graph.node(n).op_type;
    const auto [found, added] = index.emplace(op + '\n' + reasons, groups.size());
    if (added) {
      std::string detail = rejections.empty() ? std::string() : rejections.front().detail;
      if (detail.size() > kDetailChars) detail = detail.substr(0, kDetailChars) + "...";
      groups.push_back({op, reasons, detail, {}});
    }
    groups[found->second].nodes.push_back(n);
  }
  std::string message = opening;
  message += std::to_string(offenders.size()) + (offenders.size() == 1 ? " node: " : " nodes: ");
  for (size_t g = 0; g < groups.size() && g < kShownGroups; ++g) {
    const Group& group = groups[g];
    message += g ? "; " : "";
    if (group.nodes.size() == 1) {
      message += "node '" + node_label(graph, group.nodes[0]) + "' (" + group.op + ")";
    } else {
      message += std::to_string(group.nodes.size()) + " " + group.op + " (";
      for (size_t i = 0; i < group.nodes.size() && i < kNamesPerGroup; ++i) {
        message +=
            (i ? ", " : "") + std::string("node '") + node_label(graph, group.nodes[i]) + "'";
      }
      message += group.nodes.size() > kNamesPerGroup ? ", ...)" : ")";
    }
    message += ": " + group.reasons;
    if (!group.detail.empty()) message += ": " + group.detail;
  }
  if (groups.size() > kShownGroups) {
    message += "; and " + std::to_string(groups.size() - kShownGroups) + " more kinds";
  }
  if (offenders.size() > 1) message += " (`hsched report` lists every node with its reasons)";
  return invalid_argument(message);
}

}  // namespace hsched::planner
