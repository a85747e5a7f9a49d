// The helper modes of proxy_bench (proxy_bench_load.cpp): main dispatches to them; a driver in
// proxy_bench.cpp runs each as a process of its own, the same executable with MODE ARGS.
#pragma once

namespace proxy_bench {

// client BYTES HOST PORT [--proxy HOST:PORT --auth USER:PASS | --proxy-env]
int client_main(int argc, char** argv);
// rate-load PROXY_PORT SECONDS CONCURRENCY http|socks5 TARGET_HOST USER:PASS LATENCY_FILE
int rate_load_main(int argc, char** argv);
// tunnels-load PROXY_PORT N USER:PASS          (driven over stdin/stdout)
int tunnels_load_main(int argc, char** argv);

}  // namespace proxy_bench
