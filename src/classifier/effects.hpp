// Deciding by effect: a rule says what a command does (its Effect), and the policy in force
// says whether the sandbox contains that. The same `pip install` is `sandboxed` under the
// default policy and `escalated` with the sandbox off or the host's network open. The table
// of effects and the reason for each row is in docs/cli.md, "Deciding before running".
#pragma once

#include <string>

#include "paddock/classifier.hpp"

namespace paddock::classifier {

enum class Effect {
  read_only,    // reads or prints: allow, whatever the policy
  contained,    // changes only what the sandbox gives it (workspace, /tmp, its own processes,
                // its own network namespace): sandboxed; escalated with the sandbox off or
                // the network open
  remote,       // changes state elsewhere through the network (git push, publish, upload):
                // escalated unless the network is blocked (then it cannot reach anything)
  uncontained,  // reaches past the sandbox whatever the policy (credential stores, root,
                // host accounts, modes others can use): escalated
  opaque,       // hides what it runs from the analysis: escalated
  hostile,      // destroys or compromises beyond recovery, or plainly hostile: forbidden
};

struct EffectDecision {
  Decision decision;
  std::string why;  // appended to the rule's reason when the policy changed the answer
};

EffectDecision decide(Effect e, const ClassifyContext& ctx);

}  // namespace paddock::classifier
