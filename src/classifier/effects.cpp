#include "classifier/effects.hpp"

namespace paddock::classifier {

EffectDecision decide(Effect e, const ClassifyContext& ctx) {
  switch (e) {
    case Effect::read_only:
      return {Decision::allow, ""};
    case Effect::contained:
      if (!ctx.sandboxed)
        return {Decision::escalated, " (the sandbox is off: nothing contains it)"};
      if (ctx.network == NetworkMode::allowed)
        return {Decision::escalated, " (the network is open: the sandbox does not contain it)"};
      return {Decision::sandboxed, ""};
    case Effect::remote:
      if (ctx.sandboxed && ctx.network == NetworkMode::blocked)
        return {Decision::sandboxed, " (the network is blocked: it reaches nothing)"};
      return {Decision::escalated, ""};
    case Effect::uncontained:
    case Effect::opaque:
      return {Decision::escalated, ""};
    case Effect::hostile:
      return {Decision::forbidden, ""};
  }
  return {Decision::escalated, ""};
}

}  // namespace paddock::classifier
