#include "error_text.h"

#include <regex>

namespace cs {

namespace {

constexpr char kOpen[] = " [detail: ";

void append(std::string& to, const std::string& what) {
  if (what.empty()) return;
  if (!to.empty()) to += "; ";
  to += what;
}

}  // namespace

std::string with_detail(const std::string& message, const std::string& detail) {
  return detail.empty() ? message : message + kOpen + detail + "]";
}

ErrorParts split_error_text(const std::string& text) {
  ErrorParts parts;
  std::string rest = text;
  for (;;) {
    const size_t open = rest.find(kOpen);
    if (open == std::string::npos) break;
    // The detail may hold brackets of its own (a call's arguments): find the
    // one that closes ours.
    size_t i = open + sizeof(kOpen) - 1;
    int depth = 1;
    for (; i < rest.size() && depth > 0; ++i) {
      if (rest[i] == '[') ++depth;
      if (rest[i] == ']') --depth;
    }
    const size_t body = open + sizeof(kOpen) - 1;
    append(parts.detail, rest.substr(body, (depth == 0 ? i - 1 : i) - body));
    rest.erase(open, i - open);
  }
  // A path ending in a C/C++/CUDA source name and a line number, with the
  // ": " that usually follows it.
  static const std::regex location(R"((?:[\w.\-]*/)*[\w.\-]+\.(?:c|cc|cpp|cxx|cu|cuh|h|hh|hpp)(?::\d+)+:?\s*)");
  std::smatch m;
  while (std::regex_search(rest, m, location)) {
    std::string where = m.str();
    while (!where.empty() && (where.back() == ' ' || where.back() == ':')) where.pop_back();
    append(parts.detail, where);
    rest.erase(static_cast<size_t>(m.position()), static_cast<size_t>(m.length()));
  }
  parts.message = rest;
  return parts;
}

}  // namespace cs
