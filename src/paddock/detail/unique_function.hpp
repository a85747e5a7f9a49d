// A move-only type-erased callable. Completion handlers (use_future's promise, coroutine
// continuations) are move-only, so std::function cannot hold them; Asio 1.22 has no
// any_completion_handler yet. Small and local instead of a dependency.
#pragma once

#include <memory>
#include <utility>

namespace paddock::detail {

template <typename Signature>
class unique_function;

template <typename R, typename... Args>
class unique_function<R(Args...)> {
 public:
  unique_function() = default;
  template <typename F>
  unique_function(F f) : impl_(std::make_unique<model<F>>(std::move(f))) {}  // NOLINT

  explicit operator bool() const noexcept { return impl_ != nullptr; }
  R operator()(Args... args) { return impl_->call(std::forward<Args>(args)...); }

 private:
  struct concept_t {
    virtual ~concept_t() = default;
    virtual R call(Args... args) = 0;
  };
  template <typename F>
  struct model final : concept_t {
    explicit model(F fn) : f(std::move(fn)) {}
    R call(Args... args) override { return f(std::forward<Args>(args)...); }
    F f;
  };
  std::unique_ptr<concept_t> impl_;
};

}  // namespace paddock::detail
