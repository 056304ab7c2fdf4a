// Fuzzes the PostMark script parser (controller/workloads/postmark_config.h). `load` lines
// read files; they are looked up in a directory that does not exist, and absolute names are
// what they are (ReadTextFile refuses devices and huge files).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "controller/workloads/postmark/postmark_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)stormark::controller::ParsePostmarkConfig(text, "fuzz.pm", "/nonexistent-stormark-fuzz/",
                                                  stormark::v1::PostmarkSpec());
  return 0;
}
