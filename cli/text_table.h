// Aligned text columns for the CLI's own listings (`hsched plan`, `hsched devices`); the fallback
// report lays out its tables itself (scheduler/report/report_text.cpp).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace hsched::cli {

// One line per row, cells left-aligned and separated by two spaces; the last cell of a row is not
// padded (it may be free text). Rows may have fewer cells than others.
inline std::string format_columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text;
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      text += row[c];
      if (c + 1 < row.size()) text += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    text += '\n';
  }
  return text;
}

}  // namespace hsched::cli
