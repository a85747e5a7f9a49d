// The built-in path lists (default_paths.hpp). Adding an entry here is all it takes: the
// policy resolves every entry per command, so files created on the host later are covered.
#include "sandbox/default_paths.hpp"

namespace paddock::sandbox {

const std::vector<std::string>& default_credential_paths() {
  static const std::vector<std::string> paths = {
      // SSH and GPG keys.
      "~/.ssh", "~/.gnupg",
      // Clouds and clusters (their config also names programs to run: credential_process,
      // kubeconfig exec plugins).
      "~/.aws", "~/.azure", "~/.config/gcloud", "~/.oci", "~/.kube", "~/.config/doctl",
      "~/.config/hcloud", "~/.fly", "~/.databrickscfg", "~/.config/rclone", "~/.s3cfg", "~/.boto",
      "~/.terraform.d/credentials.tfrc.json", "~/.vault-token",
      // Container registries (podman and buildah keep auth.json in the runtime dir too).
      "~/.docker/config.json", "~/.config/containers/auth.json", "/run/user/*/containers/auth.json",
      "/run/containers/*/auth.json",
      // paddock's own daemons (`paddock run`'s helpers, sessions): a command that may connect
      // to unix sockets (network.allowAllUnixSockets) would otherwise reach one serving another
      // policy. (/tmp/paddock-UID, the fallback, is behind the sandbox's private /tmp.)
      "/run/user/*/paddock",
      // Forges and git credentials.
      "~/.config/gh", "~/.config/hub", "~/.config/glab-cli", "~/.git-credentials", "~/.netrc",
      "~/.config/git/credentials",
      // More CLIs' tokens (the fail-closed issue's list: the hidden home hides them anyway;
      // named here they stay hidden under `allowRead: ~` too, and the classifier knows them).
      "~/.terraformrc", "~/.config/helm/repositories.yaml", "~/.alibabacloud", "~/.wrangler",
      "~/.config/heroku", "~/.config/ngrok", "~/.ngrok2", "~/.snowsql", "~/.config/openai",
      "~/.anthropic",
      // Package registries: npm, yarn, PyPI, RubyGems, crates.io, Maven, Gradle, Composer.
      "~/.npmrc", "~/.yarnrc.yml", "~/.pypirc", "~/.gem/credentials", "~/.cargo/credentials",
      "~/.local/share/uv/credentials", "~/.cargo/credentials.toml", "~/.m2/settings.xml",
      "~/.m2/settings-security.xml", "~/.gradle/gradle.properties", "~/.composer/auth.json",
      "~/.config/composer/auth.json",
      // Databases and data tools.
      "~/.pgpass", "~/.my.cnf", "~/.dbt/profiles.yml", "~/.kaggle/kaggle.json",
      "~/.cache/huggingface/token", "~/.huggingface/token",
      // Secret stores, password managers, encryption keys, browser profiles (cookies are
      // sessions).
      "~/.password-store", "~/.local/share/keyrings", "~/.config/op", "~/.op", "~/.config/sops",
      "~/.mozilla", "~/.config/google-chrome", "~/.config/chromium",
      // Coding agents' and AI tools' login tokens.
      "~/.claude/.credentials.json", "~/.claude.json", "~/.codex/auth.json", "~/.gemini",
      "~/.config/github-copilot",
      // Shell and REPL history: tokens typed on command lines and in database shells. vim's
      // viminfo holds registers (yanked text) too.
      "~/.bash_history", "~/.zsh_history", "~/.histfile", "~/.sh_history", "~/.history",
      "~/.local/share/fish/fish_history", "~/.python_history", "~/.node_repl_history",
      "~/.psql_history", "~/.mysql_history", "~/.sqlite_history", "~/.rediscli_history",
      "~/.dbshell", "~/.mongodb", "~/.irb_history", "~/.pry_history", "~/.Rhistory",
      "~/.scala_history", "~/.julia/logs", "~/.lesshst", "~/.viminfo",
      "~/.ipython/profile_default/history.sqlite",
      // The host's password hashes, sudo policy, host and TLS keys.
      "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
      "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh/ssh_host_*_key", "/etc/ssl/private",
      "/etc/krb5.keytab", "/etc/NetworkManager/system-connections", "/etc/wireguard"};
  return paths;
}

const std::vector<std::string>& mandatory_read_only_names() {
  static const std::vector<std::string> names = {
      // Git runs hooks and honours config (core.hooksPath, core.fsmonitor, aliases) on the host;
      // commondir redirects all of that to another git dir, and modules/ holds submodules' git
      // dirs with hooks and config of their own. .husky/.githooks: the usual core.hooksPath.
      ".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir", ".git/modules",
      ".gitconfig", ".gitmodules", ".husky", ".githooks",
      // Shells source these on the host.
      ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
      ".zshenv", ".zlogin", ".zlogout", ".config/fish",
      // Run on `cd` (direnv), by package managers (script-shell, yarnPath) and by ripgrep (--pre).
      ".envrc", ".npmrc", ".yarnrc", ".yarnrc.yml", ".ripgreprc",
      // Editors, dev containers (initializeCommand runs on the host) and agents: config that
      // starts programs or MCP servers.
      ".vscode", ".idea", ".devcontainer", ".mcp.json", ".claude", ".cursor", ".codex", ".gemini",
      ".continue", ".windsurf", ".aider.conf.yml"};
  return names;
}

const std::vector<std::string>& home_startup_paths() {
  static const std::vector<std::string> paths = {
      // The sandbox's own policy: srt's settings file, which paddock reads by default (a
      // command that could write it would choose the next command's sandbox).
      "~/.srt-settings.json",
      // Shells: login and interactive start-up and logout files of bash, zsh, sh/dash, ksh,
      // csh/tcsh, and readline's (its macros type commands). Fedora's bash sources ~/.bashrc.d;
      // oh-my-zsh is sourced by ~/.zshrc.
      "~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.bash_aliases",
      "~/.bashrc.d", "~/.profile", "~/.zshrc", "~/.zshenv", "~/.zprofile", "~/.zlogin",
      "~/.zlogout", "~/.oh-my-zsh", "~/.shrc", "~/.kshrc", "~/.mkshrc", "~/.cshrc", "~/.tcshrc",
      "~/.login", "~/.logout", "~/.inputrc",
      // The whole XDG config dir: fish, git (config, hooks via core.hooksPath), autostart,
      // systemd user units, environment.d, editors' init files, every tool's settings. Listing
      // the dangerous ones would always lag behind the tools; commands that must write config
      // get it through their own --config or XDG_CONFIG_HOME pointing into the workspace.
      "~/.config",
      // Session start-up: PAM's environment, X11 session scripts, mail delivery pipes.
      "~/.pam_environment", "~/.xinitrc", "~/.xsession", "~/.xsessionrc", "~/.xprofile",
      "~/.xserverrc", "~/.forward", "~/.procmailrc",
      // What the host runs by name or loads on start: PATH directories (~/bin and
      // ~/.local/bin are on Debian's and Fedora's default PATH, ~/.cargo/bin by rustup's env
      // file), Python's user site-packages (a .pth file runs in every interpreter), desktop
      // entries, systemd user units, fish's vendor functions, direnv's allow list, neovim's
      // plugins.
      "~/bin", "~/.local/bin", "~/.local/lib", "~/.local/share/applications",
      "~/.local/share/systemd", "~/.local/share/fish", "~/.local/share/direnv",
      "~/.local/share/nvim/site", "~/.cargo/bin", "~/.cargo/env",
      // Tools' start-up files and plugin dirs that run code: editors, terminal multiplexers,
      // git (also a mandatory name), cargo (rustc-wrapper), Gradle init scripts, Docker CLI
      // plugins, IPython start-up scripts, bun's preload, nvm (sourced by ~/.bashrc).
      "~/.vimrc", "~/.vim", "~/.exrc", "~/.gvimrc", "~/.emacs", "~/.emacs.d", "~/.tmux.conf",
      "~/.screenrc", "~/.gitconfig", "~/.cargo/config", "~/.cargo/config.toml", "~/.gradle/init.d",
      "~/.gradle/init.gradle", "~/.gradle/init.gradle.kts", "~/.docker/cli-plugins",
      "~/.ipython/profile_default/startup", "~/.bunfig.toml", "~/.nvm/nvm.sh"};
  return paths;
}

const std::vector<std::string>& home_readable_paths() {
  static const std::vector<std::string> paths = {
      // Programs on the user's PATH, and Python's user site-packages.
      "~/bin", "~/.local/bin", "~/.local/lib",
      // Toolchain managers and what they install: pyenv, rbenv, nodenv, nvm, volta, fnm, bun,
      // deno, rustup and cargo's programs, Go's module cache and programs (not ~/go/src:
      // checkouts), SDKMAN,
      // asdf, mise, uv's Pythons and tools, conda-style installs, Lean, GHCup, opam, Homebrew
      // on Linux.
      "~/.pyenv", "~/.rbenv", "~/.nodenv", "~/.nvm", "~/.volta", "~/.fnm", "~/.local/share/fnm",
      "~/.bun/bin", "~/.deno/bin", "~/.rustup", "~/.cargo/bin", "~/go/bin", "~/go/pkg/mod",
      "~/.sdkman", "~/.asdf", "~/.local/share/mise", "~/.local/share/uv", "~/miniconda3",
      "~/anaconda3", "~/miniforge3", "~/.elan", "~/.ghcup", "~/.opam", "/home/linuxbrew/.linuxbrew",
      // Package caches, read-only: a build finds what was downloaded before. pip, uv, npm,
      // pnpm, yarn, node-gyp's headers, Go's build cache, cargo's registry and git checkouts,
      // Maven, Gradle, Composer, RubyGems, Hugging Face models, Playwright's browsers. The
      // credentials among them (~/.gem/credentials, ~/.cache/huggingface/token) stay hidden:
      // the credential list applies deeper.
      "~/.cache/pip", "~/.cache/uv", "~/.npm/_cacache", "~/.cache/pnpm", "~/.local/share/pnpm",
      "~/.cache/yarn", "~/.cache/node-gyp", "~/.cache/go-build", "~/.cargo/registry",
      "~/.cargo/git", "~/.m2/repository", "~/.gradle/caches", "~/.gradle/wrapper",
      "~/.cache/composer", "~/.gem", "~/.cache/huggingface/hub", "~/.cache/ms-playwright",
      // git's global excludes file (patterns only): without it `git add -A` in the sandbox
      // commits what the user's git leaves out (editor swap files, build output).
      "~/.config/git/ignore"};
  return paths;
}

}  // namespace paddock::sandbox
