//===- PassOptions.cpp - nnx passes refuse an option given twice ----------===//
#include "nnx/Support/PassOptions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

/// The length of the value at the start of `text`, up to the first space
/// outside quotes and braces (the value's end as MLIR's parser finds it).
static size_t valueLength(StringRef text) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (quote) {
      quote = c == quote ? 0 : quote;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      --depth;
    } else if (depth <= 0 && llvm::isSpace(c)) {
      return i;
    }
  }
  return text.size();
}

LogicalResult mlir::nnx::checkOptionsGivenOnce(
    StringRef name, StringRef options,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  llvm::StringMap<StringRef> given;
  StringRef rest = options;
  while (!(rest = rest.ltrim()).empty()) {
    size_t keyEnd =
        rest.find_if([](char c) { return c == '=' || llvm::isSpace(c); });
    StringRef key = rest.take_front(keyEnd);
    size_t end = keyEnd;
    if (end < rest.size() && rest[end] == '=')
      end += 1 + valueLength(rest.drop_front(end + 1));
    StringRef entry = rest.take_front(end);
    rest = rest.drop_front(end);
    auto [it, inserted] = given.try_emplace(key, entry);
    if (!inserted)
      return errorHandler("'" + name + "': option '" + key +
                          "' is given twice ('" + it->second + "', then '" +
                          entry + "'); give it once");
  }
  return success();
}
