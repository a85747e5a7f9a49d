// Template body of Manager::async_exec (Beast's impl/ split): adapts any completion token to
// the type-erased handler the non-template core uses.
#pragma once

#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/dispatch.hpp>
#include <asio/execution/outstanding_work.hpp>
#include <asio/prefer.hpp>
#include <memory>
#include <utility>

#include "paddock/asio_config.hpp"  // first: the Asio macros this library was built with
#include "paddock/detail/completion.hpp"

namespace paddock {

template <typename CompletionToken>
auto Manager::async_exec(Command command, ExecOptions options, CompletionToken&& token) {
  return asio::async_initiate<CompletionToken, void(std::error_code, ExecResult)>(
      [this](auto handler, Command cmd, ExecOptions opts) {
        auto slot = asio::get_associated_cancellation_slot(handler);
        auto op = prepare_exec(std::move(opts), detail::completion_for<std::error_code, ExecResult>(
                                                    std::move(handler), get_executor()));
        if (slot.is_connected()) {
          slot.assign(
              [state = std::weak_ptr<detail::ManagerState>(state_),
               weak = std::weak_ptr<manager::ExecOperation>(op)](asio::cancellation_type t) {
                // Killing a process is a side effect: honour terminal and partial, not total.
                if ((t & (asio::cancellation_type::terminal | asio::cancellation_type::partial)) !=
                    asio::cancellation_type::none) {
                  cancel_exec(state, weak);
                }
              });
        }
        start_exec(op, std::move(cmd));
      },
      token, std::move(command), std::move(options));
}

}  // namespace paddock
