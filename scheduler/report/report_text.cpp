// The fallback report as plain text: header, summary, then the tables with aligned columns.
// Readable at 100 columns: long names are shortened in the middle ("/blocks/...qkv/MatMul") and
// the free-form detail comes last on its line.
#include <algorithm>
#include <sstream>

#include "scheduler/report/report_content.h"

namespace hsched::report {
namespace {

constexpr size_t kLabelWidth = 15;  // "single device" and two spaces
constexpr const char* kIndent = "  ";
constexpr const char* kEllipsis = "...";

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Keeps the start and, with twice the room, the end of `text` within `max_width` bytes, never
// splitting a UTF-8 sequence: exported names differ most at the end
// ("/blocks/b...s.7/attn/MatMul").
std::string shorten_middle(const std::string& text, size_t max_width) {
  const size_t ellipsis = std::char_traits<char>::length(kEllipsis);
  if (max_width == 0 || text.size() <= max_width || max_width <= ellipsis) return text;
  size_t head = (max_width - ellipsis) / 3;
  size_t tail_start = text.size() - (max_width - ellipsis - head);
  while (head > 0 && is_utf8_continuation(text[head])) --head;
  while (tail_start < text.size() && is_utf8_continuation(text[tail_start])) ++tail_start;
  return text.substr(0, head) + kEllipsis + text.substr(tail_start);
}

void write_fields(std::ostringstream& out, const std::vector<Field>& fields) {
  for (const Field& field : fields) {
    for (size_t i = 0; i < field.lines.size(); ++i) {
      std::string label = i == 0 ? field.label : "";
      label.resize(std::max(kLabelWidth, label.size() + 1), ' ');
      out << kIndent << label << field.lines[i] << '\n';
    }
  }
}

void write_table(std::ostringstream& out, const Table& table) {
  out << '\n' << table.title << '\n';
  if (table.rows.empty()) {
    out << kIndent << table.empty_text << '\n';
    return;
  }
  const size_t count = table.columns.size();
  std::vector<std::vector<std::string>> rows;
  rows.reserve(table.rows.size());
  std::vector<size_t> widths(count, 0);
  for (size_t c = 0; c < count; ++c) widths[c] = table.columns[c].title.size();
  for (const auto& source : table.rows) {
    std::vector<std::string> row(count);
    for (size_t c = 0; c < count && c < source.size(); ++c) {
      row[c] = shorten_middle(source[c], table.columns[c].max_width);
      widths[c] = std::max(widths[c], row[c].size());
    }
    rows.push_back(std::move(row));
  }
  auto write_row = [&](const std::vector<std::string>& cells) {
    std::string line = kIndent;
    for (size_t c = 0; c < count; ++c) {
      const std::string& cell = cells[c];
      const std::string fill(widths[c] - std::min(widths[c], cell.size()), ' ');
      if (c > 0) line += "  ";
      if (table.columns[c].numeric) {
        line += fill + cell;
      } else {
        line += cell;
        if (c + 1 < count) line += fill;  // no trailing blanks after the last column
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  std::vector<std::string> titles;
  for (const Column& column : table.columns) titles.push_back(column.title);
  write_row(titles);
  for (const auto& row : rows) write_row(row);
}

}  // namespace

std::string report_to_text(const Graph& graph, const Plan& plan) {
  const ReportContent content = build_report_content(graph, plan);
  std::ostringstream out;
  out << content.title << "\n\n";
  write_fields(out, content.header);
  out << "\nSummary\n";
  write_fields(out, content.summary);
  for (const Table& table : content.tables) write_table(out, table);
  return out.str();
}

}  // namespace hsched::report
