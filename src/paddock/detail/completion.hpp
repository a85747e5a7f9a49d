// The one adapter from an Asio completion handler to the type-erased callback the library's
// core completes: it keeps the handler's executor busy (outstanding work, so use_future or
// another io_context does not run dry) until it completes, and completes on that executor,
// clearing the handler's cancellation slot first (Asio's rule: the slot's handler is removed
// before the operation completes). Manager::async_exec and ServeClient use it.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/dispatch.hpp>
#include <asio/execution/outstanding_work.hpp>
#include <asio/prefer.hpp>
#include <utility>

#include "paddock/detail/unique_function.hpp"

namespace paddock::detail {

template <typename... Args, typename Handler>
unique_function<void(Args...)> completion_for(Handler handler,
                                              const asio::any_io_executor& fallback) {
  auto slot = asio::get_associated_cancellation_slot(handler);
  auto work = asio::prefer(asio::get_associated_executor(handler, fallback),
                           asio::execution::outstanding_work.tracked);
  return [h = std::move(handler), work = std::move(work), slot](Args... args) mutable {
    auto ex = work;
    asio::dispatch(
        ex, [h = std::move(h), work = std::move(work), slot, ... args = std::move(args)]() mutable {
          if (slot.is_connected()) slot.clear();
          std::move(h)(std::move(args)...);
        });
  };
}

}  // namespace paddock::detail
