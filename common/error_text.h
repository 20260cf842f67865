// Error texts cross the Engine API (and the core's validators) as one string.
// What a user needs, what is wrong and what to set, comes first; what a
// developer needs besides (source file and line, the failing call) follows
// as " [detail: ...]", so that the element can post the two apart: the
// sentence as the error's message, the detail in its debug string.
#pragma once

#include <string>

namespace cs {

// `message` with `detail` attached (message alone when detail is empty).
std::string with_detail(const std::string& message, const std::string& detail);

struct ErrorParts {
  std::string message;  // for people: no source locations, no function names
  std::string detail;   // for developers; empty when there is none
};

// Splits a text made with with_detail (any number of details, anywhere in
// it, as texts get prefixed on their way up). As a safety net, a source
// location ("name.cpp:123", ".cu", ".h", ...) left in the message moves to
// the detail too.
ErrorParts split_error_text(const std::string& text);

}  // namespace cs
