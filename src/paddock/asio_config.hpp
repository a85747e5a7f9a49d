// The Asio configuration libpaddock was built with, checked in every translation unit that
// includes a paddock header which uses Asio. Asio picks its event backend with macros at
// compile time, and its services must agree across the whole program: a translation unit
// that includes Asio with other macros than the library's gets other service types, and the
// program misbehaves at run time rather than failing to build. So an embedder must define the
// same macros everywhere; linking paddock::paddock through CMake (find_package) or using
// `pkg-config --cflags paddock` adds them (the library's INTERFACE compile definitions).
#pragma once

#include "paddock/build_config.hpp"

#if !defined(ASIO_STANDALONE)
#error \
    "paddock uses standalone Asio: define ASIO_STANDALONE (find_package(paddock) + paddock::paddock or `pkg-config --cflags paddock` do)"
#endif
#if PADDOCK_BUILT_WITH_IO_URING
#if !defined(ASIO_HAS_IO_URING) || !defined(ASIO_DISABLE_EPOLL)
#error \
    "this libpaddock uses Asio's io_uring backend: define ASIO_HAS_IO_URING and ASIO_DISABLE_EPOLL in every translation unit (find_package(paddock) + paddock::paddock or `pkg-config --cflags paddock` do)"
#endif
#else
#if defined(ASIO_HAS_IO_URING) || defined(ASIO_DISABLE_EPOLL)
#error \
    "this libpaddock uses Asio's epoll backend: do not define ASIO_HAS_IO_URING or ASIO_DISABLE_EPOLL (or use an io_uring build of paddock)"
#endif
#endif
