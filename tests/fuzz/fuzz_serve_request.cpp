// libFuzzer target for the serve protocol's request parser (src/serve/protocol.cpp): any line
// parses without crashing or throwing into a request or an error event; every error is one
// line of JSON; and output events carry any bytes without loss (text or base64).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "check.hpp"
#include "runtime/text_encoding.hpp"
#include "serve/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace paddock::serve;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  RequestRules rules;
  rules.allow_writable_roots = size % 2 == 0;
  auto parsed = parse_request(line, rules);
  if (auto* e = std::get_if<ProtocolError>(&parsed)) {
    FUZZ_CHECK(!e->code.empty());
    const std::string event = error_event(e->id, e->code, e->message);
    FUZZ_CHECK(event.back() == '\n');
    FUZZ_CHECK(event.find('\n') == event.size() - 1);
    FUZZ_CHECK(!nlohmann::json::parse(event, nullptr, false).is_discarded());
  } else {
    const Request& r = std::get<Request>(parsed);
    const bool needs_id = r.type != MessageType::hello && r.type != MessageType::ping;
    FUZZ_CHECK(!needs_id || !r.key.empty());
    if (r.type == MessageType::exec) {
      FUZZ_CHECK(r.exec.command.shell.has_value() != !r.exec.command.argv.empty());
      FUZZ_CHECK(!rules.allow_writable_roots ? r.exec.policy.allow_write.empty() : true);
    }
  }
  // Whatever the bytes, an output event gives them back exactly.
  const std::string event = output_event(1, paddock::OutputStream::stdout_stream, 7, line);
  FUZZ_CHECK(event.find('\n') == event.size() - 1);
  const auto j = nlohmann::json::parse(event);
  std::string back = j["data"].get<std::string>();
  if (j.contains("encoding")) {
    FUZZ_CHECK(j["encoding"] == "base64");
    back = paddock::base64_decode(back).value();
  }
  FUZZ_CHECK(back == line);
  return 0;
}
