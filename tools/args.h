// A small command-line parser shared by the tools: `--name value`,
// `--name=value` and bare `--flag`, checked against a list of known options
// so a typo is reported instead of ignored.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "stereo.h"

namespace cs::tools {

// The --method names of the tools and benches (the element's property
// nicks, gst/property_enums.cpp, name the same methods).
struct MethodName {
  const char* name;
  Method method;
};
constexpr MethodName kMethodNames[] = {{"progressive", Method::Progressive},
                                       {"block", Method::Block},
                                       {"cross", Method::Cross},
                                       {"elas", Method::Elas}};

// The method named s; false (m untouched) for another name.
inline bool parse_method(const std::string& s, Method& m) {
  for (const MethodName& n : kMethodNames)
    if (s == n.name) {
      m = n.method;
      return true;
    }
  return false;
}

// The --method name of m.
inline const char* method_name(Method m) {
  for (const MethodName& n : kMethodNames)
    if (n.method == m) return n.name;
  return "progressive";
}

// Exit codes of every tool.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // input could not be read, processing failed
constexpr int kExitUsage = 2;    // invalid options or parameters

struct OptionSpec {
  const char* name;  // without the leading dashes
  bool takes_value;
};

class Args {
 public:
  // Returns an empty string on success, else the problem.
  std::string parse(int argc, char** argv, const std::vector<OptionSpec>& specs) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.size() < 3 || a.compare(0, 2, "--") != 0) return "unexpected argument '" + a + "'";
      std::string name = a.substr(2), value;
      bool has_inline_value = false;
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_inline_value = true;
      }
      const OptionSpec* spec = nullptr;
      for (const OptionSpec& s : specs)
        if (name == s.name) spec = &s;
      if (!spec) return "unknown option --" + name;
      if (spec->takes_value && !has_inline_value) {
        if (i + 1 >= argc) return "--" + name + " needs a value";
        value = argv[++i];
      } else if (!spec->takes_value && has_inline_value) {
        return "--" + name + " takes no value";
      }
      values_[name] = value;
    }
    return {};
  }

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string text(const std::string& name, const std::string& fallback = {}) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }

  // Integer option; keeps `out` when absent. Appends a message to `error`
  // when the value is not an integer in [lo, hi].
  void integer(const std::string& name, int& out, long lo, long hi, std::string& error) const {
    auto it = values_.find(name);
    if (it == values_.end()) return;
    const char* s = it->second.c_str();
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi) {
      add(error, "--" + name + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", not '" + it->second + "'");
      return;
    }
    out = static_cast<int>(v);
  }

  void number(const std::string& name, double& out, double lo, double hi, std::string& error) const {
    auto it = values_.find(name);
    if (it == values_.end()) return;
    const char* s = it->second.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno != 0 || !std::isfinite(v) || v < lo || v > hi) {
      add(error, "--" + name + " must be a number from " + trim(lo) + " to " + trim(hi) + ", not '" + it->second +
                     "'");
      return;
    }
    out = v;
  }

  static void add(std::string& error, const std::string& message) {
    if (!error.empty()) error += "\n";
    error += message;
  }

 private:
  static std::string trim(double v) {
    std::string s = std::to_string(v);
    while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) {
      const bool dot = s.back() == '.';
      s.pop_back();
      if (dot) break;
    }
    return s;
  }
  std::map<std::string, std::string> values_;
};

}  // namespace cs::tools
